#!/usr/bin/python3
"""classify.py: image classification with pyACL, in the shape of CANN's
Python samples (a Model class owning its resources: init, load, datasets,
execute, release), run on davinci-sim through its `acl` module.  Nothing
in it is the simulator's own: it runs unchanged where pyACL is installed.

usage: classify.py MODEL.om INPUT.npy [--async N]
  INPUT.npy  the model's input, float32, its exact shape (e.g. 1x3x224x224)
  --async N  also run N inferences through a two-stream pipeline (the
             asynchronous API: copies and executions queued on alternating
             streams, each followed by a callback that checks its result
             on a report thread, as CANN's asynchronous samples do; one
             synchronization per pair) and check they agree
Prints the top-5 classes of the first output as "#k class i value v".
"""
import sys

import numpy as np

import acl

ACL_SUCCESS = 0
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_FLOAT = 0
ACL_CALLBACK_BLOCK = 1
DEVICE_ID = 0
REPORT_TIMEOUT_MS = 100


def check(ret, what):
    if ret != ACL_SUCCESS:
        raise RuntimeError(f"{what} failed: {ret} {acl.get_recent_err_msg()}")


class Model:
    """One loaded model with device buffers for its inputs and outputs."""

    def __init__(self, model_path):
        self.model_id = None
        self.desc = None
        self.inputs = []   # [(dev_ptr, size, data_buffer)]
        self.outputs = []
        self.input_dataset = None
        self.output_dataset = None
        self.model_id, ret = acl.mdl.load_from_file(model_path)
        check(ret, "acl.mdl.load_from_file")
        self.desc = acl.mdl.create_desc()
        check(acl.mdl.get_desc(self.desc, self.model_id), "acl.mdl.get_desc")
        self.input_dataset = self._dataset(self.inputs, acl.mdl.get_num_inputs(self.desc),
                                           acl.mdl.get_input_size_by_index)
        self.output_dataset = self._dataset(self.outputs, acl.mdl.get_num_outputs(self.desc),
                                            acl.mdl.get_output_size_by_index)

    def _dataset(self, bufs, count, size_of):
        dataset = acl.mdl.create_dataset()
        for i in range(count):
            size = size_of(self.desc, i)
            dev, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
            check(ret, "acl.rt.malloc")
            buf = acl.create_data_buffer(dev, size)
            bufs.append((dev, size, buf))
            _, ret = acl.mdl.add_dataset_buffer(dataset, buf)
            check(ret, "acl.mdl.add_dataset_buffer")
        return dataset

    def output_shape(self, i):
        dims, ret = acl.mdl.get_output_dims(self.desc, i)
        check(ret, "acl.mdl.get_output_dims")
        return tuple(dims["dims"])

    def copy_in(self, arrays, stream=None):
        for (dev, size, _), a in zip(self.inputs, arrays):
            a = np.ascontiguousarray(a)
            if a.nbytes != size:
                raise ValueError(f"input of {a.nbytes} bytes, the model takes {size}")
            ptr = acl.util.numpy_to_ptr(a)
            if stream is None:
                ret = acl.rt.memcpy(dev, size, ptr, size, ACL_MEMCPY_HOST_TO_DEVICE)
            else:
                ret = acl.rt.memcpy_async(dev, size, ptr, size, ACL_MEMCPY_HOST_TO_DEVICE, stream)
            check(ret, "acl.rt.memcpy")

    def copy_out(self, hosts, stream=None):
        for (dev, size, _), h in zip(self.outputs, hosts):
            ptr = acl.util.numpy_to_ptr(h)
            if stream is None:
                ret = acl.rt.memcpy(ptr, size, dev, size, ACL_MEMCPY_DEVICE_TO_HOST)
            else:
                ret = acl.rt.memcpy_async(ptr, size, dev, size, ACL_MEMCPY_DEVICE_TO_HOST, stream)
            check(ret, "acl.rt.memcpy")

    def output_arrays(self):
        return [np.empty(self.output_shape(i), np.float32) for i in range(len(self.outputs))]

    def run(self, arrays):
        """Synchronous inference: the outputs as numpy arrays."""
        self.copy_in(arrays)
        check(acl.mdl.execute(self.model_id, self.input_dataset, self.output_dataset),
              "acl.mdl.execute")
        outs = self.output_arrays()
        self.copy_out(outs)
        return outs

    def run_async(self, arrays, stream):
        """Queue copy in, execution, copy out on stream; the outputs are
        valid after the stream is synchronized (the inputs must live until then)."""
        self.copy_in(arrays, stream)
        check(acl.mdl.execute_async(self.model_id, self.input_dataset, self.output_dataset,
                                    stream), "acl.mdl.execute_async")
        outs = self.output_arrays()
        self.copy_out(outs, stream)
        return outs

    def release(self):
        for bufs, dataset in ((self.inputs, self.input_dataset),
                              (self.outputs, self.output_dataset)):
            for dev, _, buf in bufs:
                check(acl.destroy_data_buffer(buf), "acl.destroy_data_buffer")
                check(acl.rt.free(dev), "acl.rt.free")
            bufs.clear()
            if dataset is not None:
                check(acl.mdl.destroy_dataset(dataset), "acl.mdl.destroy_dataset")
        self.input_dataset = self.output_dataset = None
        if self.desc is not None:
            check(acl.mdl.destroy_desc(self.desc), "acl.mdl.destroy_desc")
            self.desc = None
        if self.model_id is not None:
            check(acl.mdl.unload(self.model_id), "acl.mdl.unload")
            self.model_id = None


class Pipeline:
    """Asynchronous inference on several streams with a report thread: each
    inference queues its copies and execution, then a callback that takes
    its outputs once the stream has reached it (acl.rt.launch_callback),
    run on the thread that loops over acl.rt.process_report."""

    def __init__(self, context, models, expected):
        self.context = context
        self.models = models
        self.expected = expected
        self.agree = 0
        self.done = 0
        self.running = True
        self.streams = []
        for _ in models:
            s, ret = acl.rt.create_stream()
            check(ret, "acl.rt.create_stream")
            self.streams.append(s)
        self.tid, ret = acl.util.start_thread(self._report_loop, [context, REPORT_TIMEOUT_MS])
        check(ret, "acl.util.start_thread")
        for s in self.streams:
            check(acl.rt.subscribe_report(self.tid, s), "acl.rt.subscribe_report")

    def _report_loop(self, args_list):
        context, timeout = args_list
        acl.rt.set_context(context)
        while self.running:
            acl.rt.process_report(timeout)  # a timeout just means nothing was due

    def _on_done(self, user_data):
        outs = user_data[0]
        self.done += 1
        self.agree += int(np.array_equal(outs[0], self.expected))

    def run(self, arrays, n):
        for i in range(0, n, len(self.models)):
            for m, s in list(zip(self.models, self.streams))[: n - i]:
                outs = m.run_async(arrays, s)
                check(acl.rt.launch_callback(self._on_done, [outs], ACL_CALLBACK_BLOCK, s),
                      "acl.rt.launch_callback")
            for s in self.streams:
                check(acl.rt.synchronize_stream(s), "acl.rt.synchronize_stream")
        if self.done != n:
            raise RuntimeError(f"{self.done} of {n} callbacks ran")
        return self.agree

    def release(self):
        for s in self.streams:
            check(acl.rt.unsubscribe_report(self.tid, s), "acl.rt.unsubscribe_report")
        self.running = False
        check(acl.util.stop_thread(self.tid), "acl.util.stop_thread")
        for s in self.streams:
            check(acl.rt.destroy_stream(s), "acl.rt.destroy_stream")
        self.streams = []


def top5(logits):
    flat = logits.reshape(-1)
    return [int(i) for i in np.argsort(-flat, kind="stable")[:5]]


def main(argv):
    if len(argv) not in (3, 5) or (len(argv) == 5 and argv[3] != "--async"):
        print(__doc__, file=sys.stderr)
        return 2
    x = np.load(argv[2]).astype(np.float32)
    check(acl.init(), "acl.init")
    check(acl.rt.set_device(DEVICE_ID), "acl.rt.set_device")
    context, ret = acl.rt.create_context(DEVICE_ID)
    check(ret, "acl.rt.create_context")
    print(f"chip {acl.get_soc_name()}")
    model = Model(argv[1])
    try:
        y = model.run([x])[0]
        for k, c in enumerate(top5(y)):
            print(f"#{k + 1} class {c} value {y.reshape(-1)[c]:.6f}")
        if len(argv) == 5:
            # One model instance per stream: each has its own buffers, so
            # the two pipelines never write the same memory.
            second = Model(argv[1])
            pipeline = Pipeline(context, (model, second), y)
            try:
                n = int(argv[4])
                agree = pipeline.run([x], n)
                print(f"async: {agree} of {n} inferences equal the synchronous one")
            finally:
                pipeline.release()
                second.release()
    finally:
        model.release()
        check(acl.rt.destroy_context(context), "acl.rt.destroy_context")
        check(acl.rt.reset_device(DEVICE_ID), "acl.rt.reset_device")
        check(acl.finalize(), "acl.finalize")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
