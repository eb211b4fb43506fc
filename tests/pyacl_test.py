#!/usr/bin/python3
"""Unit tests of `import acl` (python/): pyACL's module layout and return
shapes, a model run, and misuse (wrong sizes, freed pointers, stale or
made-up handles, wrong argument types) giving ACL error codes or Python
exceptions, never a crash.

Run by tests/pyacl_unit.sh, which puts the build tree's module on the path
and sets PYACL_DIR to a directory holding cnn.om, input.bin and
expected.txt (tests/acl_model.py's small CNN), or leaves it unset when
torch is missing (the model tests are then skipped)."""
import os
import tempfile
import threading
import time
import unittest

import numpy as np

import acl

MODEL_DIR = os.environ.get("PYACL_DIR", "")
HAVE_MODEL = bool(MODEL_DIR) and os.path.exists(os.path.join(MODEL_DIR, "cnn.om"))
HAVE_910 = bool(MODEL_DIR) and os.path.exists(os.path.join(MODEL_DIR, "cnn910.om"))
HAVE_DYN = bool(MODEL_DIR) and os.path.exists(os.path.join(MODEL_DIR, "dyn.om"))


class Layout(unittest.TestCase):
    def test_submodules(self):
        from acl import mdl, prof, rt, util
        self.assertIs(prof, acl.prof)
        self.assertIs(rt, acl.rt)
        self.assertIs(mdl, acl.mdl)
        self.assertIs(util, acl.util)
        for name in ("set_device", "malloc", "memcpy_async", "create_stream", "get_run_mode"):
            self.assertTrue(callable(getattr(acl.rt, name)), name)
        for name in ("load_from_file", "execute_async", "get_input_dims", "add_dataset_buffer"):
            self.assertTrue(callable(getattr(acl.mdl, name)), name)

    def test_constants(self):
        # ACL's numbers
        self.assertEqual(acl.ACL_SUCCESS, 0)
        self.assertEqual(acl.ACL_ERROR_INVALID_PARAM, 100000)
        self.assertEqual(acl.ACL_ERROR_INVALID_RESOURCE_HANDLE, 200005)
        self.assertEqual(acl.ACL_MEM_MALLOC_HUGE_FIRST, 0)
        self.assertEqual(acl.ACL_MEMCPY_HOST_TO_DEVICE, 1)
        self.assertEqual(acl.ACL_MEMCPY_DEVICE_TO_HOST, 2)
        self.assertEqual(acl.ACL_FLOAT16, 1)
        self.assertEqual(acl.ACL_HOST, 1)

    def test_before_init(self):
        self.assertIsNone(acl.get_soc_name())
        self.assertEqual(acl.rt.set_device(0), acl.ACL_ERROR_UNINITIALIZE)
        # never initialized, or finalized by an earlier test
        self.assertIn(acl.finalize(), (acl.ACL_ERROR_UNINITIALIZE, acl.ACL_ERROR_REPEAT_FINALIZE))


class Util(unittest.TestCase):
    def test_bytes_round_trip(self):
        b = bytes(range(64))
        self.assertEqual(acl.util.ptr_to_bytes(acl.util.bytes_to_ptr(b), 64), b)

    def test_numpy_round_trip(self):
        a = np.arange(12, dtype=np.float32).reshape(3, 4)
        v = acl.util.ptr_to_numpy(acl.util.numpy_to_ptr(a), (3, 4), acl.NPY_FLOAT32)
        np.testing.assert_array_equal(v, a)
        v[0, 0] = 42  # a view, as pyACL's: no copy
        self.assertEqual(a[0, 0], 42)

    def test_bad_arguments_raise(self):
        with self.assertRaises(TypeError):
            acl.util.bytes_to_ptr("text")
        with self.assertRaises(ValueError):
            acl.util.ptr_to_numpy(acl.util.bytes_to_ptr(b"abcd"), (1,), 99)
        with self.assertRaises(ValueError):
            acl.util.ptr_to_bytes(0, 16)
        with self.assertRaises(ValueError):
            acl.util.numpy_to_ptr(np.zeros((4, 4), np.float32)[:, 1])  # not contiguous


class Device(unittest.TestCase):
    def setUp(self):
        self.assertEqual(acl.init(), 0)
        self.assertEqual(acl.rt.set_device(0), 0)

    def tearDown(self):
        self.assertEqual(acl.rt.reset_device(0), 0)
        self.assertEqual(acl.finalize(), 0)

    def test_queries(self):
        self.assertEqual(acl.rt.get_run_mode(), (acl.ACL_HOST, 0))
        self.assertEqual(acl.rt.get_device(), (0, 0))
        self.assertEqual(acl.rt.get_device_count(), (1, 0))
        self.assertEqual(acl.get_soc_name(), "Ascend310")
        self.assertEqual(acl.rt.get_soc_name(), "Ascend310")
        self.assertEqual(acl.rt.set_device(3), acl.ACL_ERROR_RT_INVALID_DEVICEID)
        free, total, ret = acl.rt.get_mem_info(acl.ACL_HBM_MEM)
        self.assertEqual(ret, 0)
        self.assertTrue(0 < free <= total)
        self.assertEqual(acl.rt.get_mem_info(99)[2], acl.ACL_ERROR_INVALID_PARAM)

    def test_memcpy_round_trip(self):
        a = np.arange(256, dtype=np.float32)
        dev, ret = acl.rt.malloc(a.nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        self.assertEqual(ret, 0)
        self.assertNotEqual(dev, 0)
        host, ret = acl.rt.malloc_host(a.nbytes)
        self.assertEqual(ret, 0)
        self.assertEqual(acl.rt.memcpy(dev, a.nbytes, acl.util.numpy_to_ptr(a), a.nbytes,
                                       acl.ACL_MEMCPY_HOST_TO_DEVICE), 0)
        stream, ret = acl.rt.create_stream()
        self.assertEqual(ret, 0)
        self.assertEqual(acl.rt.memcpy_async(host, a.nbytes, dev, a.nbytes,
                                             acl.ACL_MEMCPY_DEVICE_TO_HOST, stream), 0)
        self.assertEqual(acl.rt.synchronize_stream(stream), 0)
        np.testing.assert_array_equal(acl.util.ptr_to_numpy(host, (256,), acl.NPY_FLOAT32), a)
        self.assertEqual(acl.rt.destroy_stream(stream), 0)
        self.assertEqual(acl.rt.free_host(host), 0)
        self.assertEqual(acl.rt.free(dev), 0)

    def test_device_pointer_not_read_on_host(self):
        dev, _ = acl.rt.malloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        attrs, ret = acl.rt.pointer_get_attributes(dev)
        self.assertEqual(ret, 0)
        self.assertEqual(attrs["location"]["type"], acl.ACL_MEM_LOCATION_TYPE_DEVICE)
        with self.assertRaises(ValueError):
            acl.util.ptr_to_bytes(dev, 64)  # would crash: not host memory
        with self.assertRaises(ValueError):
            acl.util.ptr_to_numpy(dev, (16,), acl.NPY_FLOAT32)
        host, _ = acl.rt.malloc_host(64)
        self.assertEqual(acl.rt.pointer_get_attributes(host)[0]["location"]["type"],
                         acl.ACL_MEM_LOCATION_TYPE_HOST)
        self.assertEqual(len(acl.util.ptr_to_bytes(host, 64)), 64)
        self.assertEqual(acl.rt.free_host(host), 0)
        self.assertEqual(acl.rt.free(dev), 0)

    def test_wrong_size_copy(self):
        dev, _ = acl.rt.malloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        a = np.zeros(32, np.float32)  # 128 bytes
        src = acl.util.numpy_to_ptr(a)
        self.assertEqual(acl.rt.memcpy(dev, 64, src, 128, acl.ACL_MEMCPY_HOST_TO_DEVICE),
                         acl.ACL_ERROR_INVALID_PARAM)  # count > dest_max
        self.assertNotEqual(acl.rt.memcpy(dev, 128, src, 128, acl.ACL_MEMCPY_HOST_TO_DEVICE), 0)
        self.assertIn("not inside one aclrtMalloc allocation", acl.get_recent_err_msg())
        self.assertEqual(acl.rt.memcpy(dev, 64, src, 64, 7), acl.ACL_ERROR_INVALID_PARAM)
        self.assertEqual(acl.rt.free(dev), 0)

    def test_freed_pointer(self):
        dev, _ = acl.rt.malloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        self.assertEqual(acl.rt.free(dev), 0)
        self.assertNotEqual(acl.rt.free(dev), 0)
        self.assertIn("freed", acl.get_recent_err_msg())
        b = bytes(64)
        self.assertNotEqual(acl.rt.memcpy(dev, 64, acl.util.bytes_to_ptr(b), 64,
                                          acl.ACL_MEMCPY_HOST_TO_DEVICE), 0)
        host, _ = acl.rt.malloc_host(16)
        self.assertEqual(acl.rt.free_host(host), 0)
        self.assertNotEqual(acl.rt.free_host(host), 0)

    def test_stale_and_made_up_handles(self):
        bad = 0x12345678
        self.assertEqual(acl.rt.destroy_stream(bad), acl.ACL_ERROR_INVALID_RESOURCE_HANDLE)
        self.assertNotEqual(acl.rt.synchronize_stream(bad), 0)
        self.assertNotEqual(acl.rt.free(bad), 0)
        self.assertNotEqual(acl.mdl.destroy_dataset(bad), 0)
        self.assertNotEqual(acl.destroy_data_buffer(bad), 0)
        self.assertEqual(acl.mdl.get_num_inputs(bad), 0)
        self.assertEqual(acl.get_data_buffer_addr(bad), 0)
        ds = acl.mdl.create_dataset()
        self.assertEqual(acl.mdl.destroy_dataset(ds), 0)
        self.assertEqual(acl.mdl.destroy_dataset(ds), acl.ACL_ERROR_INVALID_RESOURCE_HANDLE)
        self.assertEqual(acl.mdl.execute(77, bad, bad), acl.ACL_ERROR_INVALID_MODEL_ID)
        self.assertEqual(acl.mdl.load_from_file("/nonexistent.om"),
                         (0, acl.ACL_ERROR_READ_MODEL_FAILURE))

    def test_stream_after_destroy(self):
        s, ret = acl.rt.create_stream()
        self.assertEqual(ret, 0)
        self.assertEqual(acl.rt.destroy_stream(s), 0)
        self.assertEqual(acl.rt.synchronize_stream(s), acl.ACL_ERROR_INVALID_RESOURCE_HANDLE)
        self.assertIn("not a live stream", acl.get_recent_err_msg())
        dev, _ = acl.rt.malloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        b = bytes(64)
        self.assertEqual(acl.rt.memcpy_async(dev, 64, acl.util.bytes_to_ptr(b), 64,
                                             acl.ACL_MEMCPY_HOST_TO_DEVICE, s),
                         acl.ACL_ERROR_INVALID_RESOURCE_HANDLE)
        self.assertEqual(acl.rt.launch_callback(print, [], 1, s),
                         acl.ACL_ERROR_INVALID_RESOURCE_HANDLE)
        self.assertEqual(acl.rt.free(dev), 0)

    def test_bad_argument_types_raise(self):
        with self.assertRaises(TypeError):
            acl.rt.malloc("64", 0)
        with self.assertRaises(OverflowError):
            acl.rt.malloc(-1, 0)
        with self.assertRaises(OverflowError):
            acl.rt.free(-5)
        with self.assertRaises(TypeError):
            acl.rt.memcpy(1.5, 4, 0, 4, 1)
        with self.assertRaises(TypeError):
            acl.mdl.execute(1, 2)

    def test_data_buffer(self):
        dev, _ = acl.rt.malloc(100, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        buf = acl.create_data_buffer(dev, 100)
        self.assertNotEqual(buf, 0)
        self.assertEqual(acl.get_data_buffer_addr(buf), dev)
        self.assertEqual(acl.get_data_buffer_size_v2(buf), 100)
        self.assertEqual(acl.get_data_buffer_size(buf), 100)
        ds = acl.mdl.create_dataset()
        self.assertEqual(acl.mdl.add_dataset_buffer(ds, buf), (ds, 0))
        self.assertEqual(acl.mdl.get_dataset_num_buffers(ds), 1)
        self.assertEqual(acl.mdl.get_dataset_buffer(ds, 0), buf)
        self.assertEqual(acl.mdl.get_dataset_buffer(ds, 1), 0)
        self.assertEqual(acl.mdl.destroy_dataset(ds), 0)
        self.assertEqual(acl.destroy_data_buffer(buf), 0)
        self.assertEqual(acl.rt.free(dev), 0)


class Callbacks(unittest.TestCase):
    """acl.rt.subscribe_report / launch_callback / process_report /
    unsubscribe_report: codes, device order, BLOCK waited for and NO_BLOCK
    not, unsubscribing drops what has not run."""

    def setUp(self):
        self.assertEqual(acl.init(), 0)
        self.assertEqual(acl.rt.set_device(0), 0)
        self.streams = []
        for _ in range(2):
            s, ret = acl.rt.create_stream()
            self.assertEqual(ret, 0)
            self.streams.append(s)
        self.log = []

    def tearDown(self):
        for s in self.streams:
            self.assertEqual(acl.rt.destroy_stream(s), 0)
        self.assertEqual(acl.rt.reset_device(0), 0)
        self.assertEqual(acl.finalize(), 0)

    def record(self, user_data):
        self.log.append(user_data[0])

    def test_errors(self):
        s = self.streams[0]
        me = threading.get_ident()
        self.assertEqual(acl.rt.process_report(10), acl.ACL_ERROR_RT_THREAD_SUBSCRIBE)
        self.assertEqual(acl.rt.process_report(0), acl.ACL_ERROR_INVALID_PARAM)
        self.assertEqual(acl.rt.launch_callback(self.record, ["a"], acl.ACL_CALLBACK_BLOCK, s),
                         acl.ACL_ERROR_RT_STREAM_NO_CB_REG)
        self.assertIn("no thread is subscribed", acl.get_recent_err_msg())
        self.assertEqual(acl.rt.subscribe_report(me, s), 0)
        self.assertEqual(acl.rt.subscribe_report(me + 1, s), acl.ACL_ERROR_RT_STREAM_SUBSCRIBE)
        self.assertIn("already has a report thread", acl.get_recent_err_msg())
        self.assertEqual(acl.rt.launch_callback(self.record, ["a"], 7, s),
                         acl.ACL_ERROR_INVALID_PARAM)
        with self.assertRaises(TypeError):
            acl.rt.launch_callback("not callable", [], 1, s)
        with self.assertRaises(TypeError):
            acl.rt.subscribe_report("1", s)
        self.assertEqual(acl.rt.process_report(20), acl.ACL_ERROR_RT_REPORT_TIMEOUT)
        self.assertEqual(acl.rt.unsubscribe_report(me + 1, s), acl.ACL_ERROR_RT_STREAM_SUBSCRIBE)
        self.assertEqual(acl.rt.unsubscribe_report(me, s), 0)
        self.assertEqual(self.log, [])

    def test_device_order_one_thread(self):
        """NO_BLOCK on two streams served by this thread: due after the
        synchronization, in device order (the empty stream's first)."""
        s1, s2 = self.streams
        me = threading.get_ident()
        for s in self.streams:
            self.assertEqual(acl.rt.subscribe_report(me, s), 0)
        a = np.full(1 << 20, 3.0, np.float32)
        back = np.zeros_like(a)
        dev, _ = acl.rt.malloc(a.nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        self.assertEqual(acl.rt.memcpy_async(dev, a.nbytes, acl.util.numpy_to_ptr(a), a.nbytes,
                                             acl.ACL_MEMCPY_HOST_TO_DEVICE, s1), 0)
        self.assertEqual(acl.rt.memcpy_async(acl.util.numpy_to_ptr(back), a.nbytes, dev, a.nbytes,
                                             acl.ACL_MEMCPY_DEVICE_TO_HOST, s1), 0)
        seen = []
        self.assertEqual(acl.rt.launch_callback(lambda d: seen.append(float(back[0])) or
                                                self.record(d), ["A"], 0, s1), 0)
        self.assertEqual(acl.rt.launch_callback(self.record, ["B"], 0, s2), 0)
        self.assertEqual(acl.rt.launch_callback(self.record, ["C"], 0, s1), 0)
        self.assertEqual(acl.rt.process_report(20), acl.ACL_ERROR_RT_REPORT_TIMEOUT)
        self.assertEqual(acl.rt.synchronize_device(), 0)
        for _ in range(3):
            self.assertEqual(acl.rt.process_report(100), 0)
        self.assertEqual(acl.rt.process_report(20), acl.ACL_ERROR_RT_REPORT_TIMEOUT)
        self.assertEqual(self.log, ["B", "A", "C"])
        self.assertEqual(seen, [3.0])
        # an exception in a callback is reported, not raised into process_report
        self.assertEqual(acl.rt.launch_callback(lambda d: 1 / 0, None, 0, s2), 0)
        self.assertEqual(acl.rt.synchronize_stream(s2), 0)
        self.assertEqual(acl.rt.process_report(100), 0)
        # unsubscribing drops what has not run
        self.assertEqual(acl.rt.launch_callback(self.record, ["D"], 0, s1), 0)
        for s in self.streams:
            self.assertEqual(acl.rt.unsubscribe_report(me, s), 0)
        self.assertEqual(acl.rt.synchronize_device(), 0)
        self.assertEqual(acl.rt.process_report(20), acl.ACL_ERROR_RT_THREAD_SUBSCRIBE)
        self.assertEqual(self.log, ["B", "A", "C"])
        self.assertEqual(acl.rt.free(dev), 0)

    def test_report_thread(self):
        """CANN's shape: acl.util.start_thread loops over process_report; a
        BLOCK callback has run when synchronize_stream returns, a NO_BLOCK
        one need not have (it waits for the host to be past the sync)."""
        s = self.streams[0]
        running = [True]
        host_back = threading.Event()

        def loop(args_list):
            while running[0]:
                acl.rt.process_report(args_list[0])

        tid, ret = acl.util.start_thread(loop, [20])
        self.assertEqual(ret, 0)
        self.assertEqual(acl.rt.subscribe_report(tid, s), 0)
        self.assertEqual(acl.rt.launch_callback(
            lambda d: (time.sleep(0.05), self.record(d)), ["block"], 1, s), 0)
        self.assertEqual(acl.rt.synchronize_stream(s), 0)
        self.assertEqual(self.log, ["block"])
        self.assertEqual(acl.rt.launch_callback(
            lambda d: self.record([host_back.wait(5)]), None, 0, s), 0)
        self.assertEqual(acl.rt.synchronize_stream(s), 0)
        host_back.set()
        for _ in range(300):
            if len(self.log) == 2:
                break
            time.sleep(0.01)
        self.assertEqual(self.log, ["block", True])
        self.assertEqual(acl.rt.unsubscribe_report(tid, s), 0)
        running[0] = False
        self.assertEqual(acl.util.stop_thread(tid), 0)
        self.assertEqual(acl.util.stop_thread(tid), acl.ACL_ERROR_INVALID_PARAM)


class Config(unittest.TestCase):
    def test_soc_from_config(self):
        with tempfile.NamedTemporaryFile("w", suffix=".ini") as f:
            f.write("[device]\nsoc = Ascend910\n")
            f.flush()
            self.assertEqual(acl.init(f.name), 0)
            self.assertEqual(acl.get_soc_name(), "Ascend910")
            self.assertEqual(acl.finalize(), 0)

    def test_bad_soc(self):
        with tempfile.NamedTemporaryFile("w", suffix=".ini") as f:
            f.write("[device]\nsoc = Ascend999\n")
            f.flush()
            self.assertEqual(acl.init(f.name), acl.ACL_ERROR_FILE_ATTR_INVALID)
            self.assertIn("Ascend999", acl.get_recent_err_msg())


@unittest.skipUnless(HAVE_DYN, "no dynamic-batch model (tests/dynbatch_models.py needs onnx)")
class DynamicBatch(unittest.TestCase):
    """tests/dynbatch_models.py's conv compiled with --dynamic_batch_size=1,2,4."""

    def test_sizes_and_execute(self):
        self.assertEqual(acl.init(), 0)
        self.assertEqual(acl.rt.set_device(0), 0)
        mid, ret = acl.mdl.load_from_file(os.path.join(MODEL_DIR, "dyn.om"))
        self.assertEqual(ret, 0)
        desc = acl.mdl.create_desc()
        self.assertEqual(acl.mdl.get_desc(desc, mid), 0)
        self.assertEqual(acl.mdl.get_dynamic_batch(desc), ({"batchCount": 3, "batch": [1, 2, 4]}, 0))
        self.assertEqual(acl.mdl.get_num_inputs(desc), 2)
        index, ret = acl.mdl.get_input_index_by_name(desc, acl.ACL_DYNAMIC_TENSOR_NAME)
        self.assertEqual((index, ret), (1, 0))
        ind, outd, owned = acl.mdl.create_dataset(), acl.mdl.create_dataset(), []
        for ds, size in ((ind, acl.mdl.get_input_size_by_index(desc, 0)),
                         (ind, acl.mdl.get_input_size_by_index(desc, index)),
                         (outd, acl.mdl.get_output_size_by_index(desc, 0))):
            dev, ret = acl.rt.malloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
            self.assertEqual(ret, 0)
            self.assertEqual(acl.rt.memset(dev, size, 0, size), 0)
            buf = acl.create_data_buffer(dev, size)
            owned.append((dev, buf))
            self.assertEqual(acl.mdl.add_dataset_buffer(ds, buf)[1], 0)
        # compiled sizes only, as CANN
        self.assertEqual(acl.mdl.set_dynamic_batch_size(mid, ind, index, 3),
                         acl.ACL_ERROR_INVALID_PARAM)
        self.assertEqual(acl.mdl.set_dynamic_batch_size(mid, ind, index, 2), 0)
        self.assertEqual(acl.mdl.execute(mid, ind, outd), 0)
        for dev, buf in owned:
            acl.destroy_data_buffer(buf)
            acl.rt.free(dev)
        self.assertEqual(acl.mdl.destroy_desc(desc), 0)
        self.assertEqual(acl.mdl.unload(mid), 0)
        self.assertEqual(acl.rt.reset_device(0), 0)
        self.assertEqual(acl.finalize(), 0)


@unittest.skipUnless(HAVE_DYN, "no dynamic-dims model (tests/dynbatch_models.py needs onnx)")
class DynamicDims(unittest.TestCase):
    """tests/dynbatch_models.py's convhw compiled with --dynamic_dims=8,8;16,16."""

    def test_gears_and_execute(self):
        self.assertEqual(acl.init(), 0)
        self.assertEqual(acl.rt.set_device(0), 0)
        mid, ret = acl.mdl.load_from_file(os.path.join(MODEL_DIR, "dims.om"))
        self.assertEqual(ret, 0)
        desc = acl.mdl.create_desc()
        self.assertEqual(acl.mdl.get_desc(desc, mid), 0)
        self.assertEqual(acl.mdl.get_input_dynamic_gear_count(desc, -1), (2, 0))
        gears, ret = acl.mdl.get_input_dynamic_dims(desc, -1, 2)
        self.assertEqual(ret, 0)
        self.assertEqual([g["dims"] for g in gears], [[1, 4, 8, 8], [1, 4, 16, 16]])
        index, ret = acl.mdl.get_input_index_by_name(desc, acl.ACL_DYNAMIC_TENSOR_NAME)
        self.assertEqual((index, ret), (1, 0))
        ind, outd, owned = acl.mdl.create_dataset(), acl.mdl.create_dataset(), []
        for ds, size in ((ind, acl.mdl.get_input_size_by_index(desc, 0)),
                         (ind, acl.mdl.get_input_size_by_index(desc, index)),
                         (outd, acl.mdl.get_output_size_by_index(desc, 0))):
            dev, ret = acl.rt.malloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
            self.assertEqual(ret, 0)
            self.assertEqual(acl.rt.memset(dev, size, 0, size), 0)
            buf = acl.create_data_buffer(dev, size)
            owned.append((dev, buf))
            self.assertEqual(acl.mdl.add_dataset_buffer(ds, buf)[1], 0)
        # the gears only, as CANN
        self.assertEqual(acl.mdl.set_input_dynamic_dims(mid, ind, index, {"dims": [1, 4, 8, 16]}),
                         acl.ACL_ERROR_INVALID_PARAM)
        self.assertEqual(acl.mdl.set_input_dynamic_dims(mid, ind, index, gears[1]), 0)
        self.assertEqual(acl.mdl.execute(mid, ind, outd), 0)
        for dev, buf in owned:
            acl.destroy_data_buffer(buf)
            acl.rt.free(dev)
        self.assertEqual(acl.mdl.destroy_desc(desc), 0)
        self.assertEqual(acl.mdl.unload(mid), 0)
        self.assertEqual(acl.rt.reset_device(0), 0)
        self.assertEqual(acl.finalize(), 0)


@unittest.skipUnless(HAVE_MODEL, "no model (tests/acl_model.py needs torch and onnx)")
class Model(unittest.TestCase):
    def setUp(self):
        self.assertEqual(acl.init(), 0)
        self.assertEqual(acl.rt.set_device(0), 0)
        self.model_id, ret = acl.mdl.load_from_file(os.path.join(MODEL_DIR, "cnn.om"))
        self.assertEqual(ret, 0)
        self.desc = acl.mdl.create_desc()
        self.assertEqual(acl.mdl.get_desc(self.desc, self.model_id), 0)
        self.owned = []  # (dev, buffer)

    def tearDown(self):
        for dev, buf in self.owned:
            acl.destroy_data_buffer(buf)
            acl.rt.free(dev)
        self.assertEqual(acl.mdl.destroy_desc(self.desc), 0)
        self.assertEqual(acl.mdl.unload(self.model_id), 0)
        self.assertEqual(acl.rt.reset_device(0), 0)
        self.assertEqual(acl.finalize(), 0)

    def dataset(self, size):
        dev, ret = acl.rt.malloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        self.assertEqual(ret, 0)
        buf = acl.create_data_buffer(dev, size)
        self.owned.append((dev, buf))
        ds = acl.mdl.create_dataset()
        self.assertEqual(acl.mdl.add_dataset_buffer(ds, buf)[1], 0)
        return ds, dev

    def test_desc(self):
        self.assertEqual(acl.mdl.get_num_inputs(self.desc), 1)
        self.assertEqual(acl.mdl.get_num_outputs(self.desc), 1)
        self.assertEqual(acl.mdl.get_input_size_by_index(self.desc, 0), 3 * 64 * 64 * 4)
        self.assertEqual(acl.mdl.get_output_size_by_index(self.desc, 0), 100 * 4)
        dims, ret = acl.mdl.get_input_dims(self.desc, 0)
        self.assertEqual(ret, 0)
        self.assertEqual(dims, {"name": "image", "dimCount": 4, "dims": [1, 3, 64, 64]})
        self.assertEqual(acl.mdl.get_output_dims(self.desc, 0)[0]["dims"], [1, 100])
        self.assertEqual(acl.mdl.get_cur_output_dims(self.desc, 0)[0]["dims"], [1, 100])
        work, weight, ret = acl.mdl.query_size(os.path.join(MODEL_DIR, "cnn.om"))
        self.assertEqual(ret, 0)
        self.assertGreater(weight, 0)
        self.assertEqual(acl.mdl.query_size("/nonexistent.om")[2], acl.ACL_ERROR_READ_MODEL_FAILURE)
        self.assertEqual(acl.mdl.get_input_name_by_index(self.desc, 0), "image")
        self.assertEqual(acl.mdl.get_input_index_by_name(self.desc, "image"), (0, 0))
        self.assertEqual(acl.mdl.get_input_data_type(self.desc, 0), acl.ACL_FLOAT)
        self.assertEqual(acl.mdl.get_input_dims(self.desc, 5)[1], acl.ACL_ERROR_INVALID_PARAM)
        self.assertEqual(acl.mdl.get_input_size_by_index(self.desc, 5), 0)

    def test_execute(self):
        x = np.fromfile(os.path.join(MODEL_DIR, "input.bin"), np.float32)
        ind, in_dev = self.dataset(x.nbytes)
        outd, out_dev = self.dataset(400)
        self.assertEqual(acl.rt.memcpy(in_dev, x.nbytes, acl.util.numpy_to_ptr(x), x.nbytes,
                                       acl.ACL_MEMCPY_HOST_TO_DEVICE), 0)
        self.assertEqual(acl.mdl.execute(self.model_id, ind, outd), 0)
        y = np.empty(100, np.float32)
        self.assertEqual(acl.rt.memcpy(acl.util.numpy_to_ptr(y), 400, out_dev, 400,
                                       acl.ACL_MEMCPY_DEVICE_TO_HOST), 0)
        with open(os.path.join(MODEL_DIR, "expected.txt")) as f:
            want = [int(line.split()[0]) for line in f]
        self.assertEqual([int(i) for i in np.argsort(-y, kind="stable")[:5]], want)
        # the asynchronous path gives the same
        stream, _ = acl.rt.create_stream()
        self.assertEqual(acl.mdl.execute_async(self.model_id, ind, outd, stream), 0)
        y2 = np.empty(100, np.float32)
        self.assertEqual(acl.rt.memcpy_async(acl.util.numpy_to_ptr(y2), 400, out_dev, 400,
                                             acl.ACL_MEMCPY_DEVICE_TO_HOST, stream), 0)
        self.assertEqual(acl.rt.synchronize_stream(stream), 0)
        np.testing.assert_array_equal(y, y2)
        self.assertEqual(acl.rt.destroy_stream(stream), 0)
        for ds in (ind, outd):
            self.assertEqual(acl.mdl.destroy_dataset(ds), 0)

    def test_profiling(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(acl.prof.init(d), 0)
            config = acl.prof.create_config([0], acl.ACL_AICORE_PIPE_UTILIZATION, 0,
                                            acl.ACL_PROF_ACL_API | acl.ACL_PROF_TASK_TIME)
            self.assertNotEqual(config, 0)
            self.assertEqual(acl.prof.create_config([3], 0, 0, 0), 0)
            self.assertEqual(acl.prof.stop(config), acl.ACL_ERROR_PROF_NOT_RUN)
            self.assertEqual(acl.prof.start(config), 0)
            x = np.fromfile(os.path.join(MODEL_DIR, "input.bin"), np.float32)
            ind, in_dev = self.dataset(x.nbytes)
            outd, _ = self.dataset(400)
            self.assertEqual(acl.rt.memcpy(in_dev, x.nbytes, acl.util.numpy_to_ptr(x), x.nbytes,
                                           acl.ACL_MEMCPY_HOST_TO_DEVICE), 0)
            self.assertEqual(acl.mdl.execute(self.model_id, ind, outd), 0)
            self.assertEqual(acl.prof.stop(config), 0)
            with open(os.path.join(d, "op_summary.csv")) as f:
                rows = f.read().splitlines()
            self.assertGreater(len(rows), 2)  # a header and the model's tasks
            self.assertTrue(os.path.exists(os.path.join(d, "timeline.json")))
            self.assertEqual(acl.prof.destroy_config(config), 0)
            self.assertEqual(acl.prof.destroy_config(config), acl.ACL_ERROR_INVALID_RESOURCE_HANDLE)
            self.assertEqual(acl.prof.finalize(), 0)
            for ds in (ind, outd):
                acl.mdl.destroy_dataset(ds)

    def test_wrong_size_buffer(self):
        ind, _ = self.dataset(1000)  # the input is 49152 bytes
        outd, _ = self.dataset(400)
        self.assertEqual(acl.mdl.execute(self.model_id, ind, outd),
                         acl.ACL_ERROR_MODEL_INPUT_NOT_MATCH)
        self.assertIn("the buffer holds 1000 bytes", acl.get_recent_err_msg())
        for ds in (ind, outd):
            acl.mdl.destroy_dataset(ds)

    def test_freed_buffer_memory(self):
        ind, in_dev = self.dataset(3 * 64 * 64 * 4)
        outd, _ = self.dataset(400)
        self.assertEqual(acl.rt.free(in_dev), 0)
        self.owned = [(d, b) for d, b in self.owned if d != in_dev]
        self.assertEqual(acl.mdl.execute(self.model_id, ind, outd),
                         acl.ACL_ERROR_MODEL_INPUT_NOT_MATCH)
        self.assertIn("not device memory", acl.get_recent_err_msg())
        for ds in (ind, outd):
            acl.mdl.destroy_dataset(ds)

    def test_load_from_mem(self):
        with open(os.path.join(MODEL_DIR, "cnn.om"), "rb") as f:
            data = f.read()
        mid, ret = acl.mdl.load_from_mem(acl.util.bytes_to_ptr(data), len(data))
        self.assertEqual(ret, 0)
        self.assertNotEqual(mid, self.model_id)
        self.assertEqual(acl.mdl.unload(mid), 0)
        self.assertEqual(acl.mdl.load_from_mem(acl.util.bytes_to_ptr(data), 300)[1],
                         acl.ACL_ERROR_PARSE_MODEL)

    def test_unloaded_model(self):
        other, ret = acl.mdl.load_from_file(os.path.join(MODEL_DIR, "cnn.om"))
        self.assertEqual(ret, 0)
        self.assertEqual(acl.mdl.unload(other), 0)
        self.assertEqual(acl.mdl.unload(other), acl.ACL_ERROR_INVALID_MODEL_ID)
        self.assertNotEqual(acl.mdl.get_desc(self.desc, other), 0)


@unittest.skipUnless(HAVE_910, "no model (tests/acl_model.py needs torch and onnx)")
class SocChoice(unittest.TestCase):
    """Without $DAVINCI_SOC or a config, the first model loaded chooses the
    SoC; a chosen SoC refuses an .om compiled for another."""

    def tearDown(self):
        self.assertEqual(acl.rt.reset_device(0), 0)
        self.assertEqual(acl.finalize(), 0)

    def test_default_follows_model(self):
        self.assertEqual(acl.init(), 0)
        self.assertEqual(acl.rt.set_device(0), 0)
        s, _ = acl.rt.create_stream()
        mid, ret = acl.mdl.load_from_file(os.path.join(MODEL_DIR, "cnn910.om"))
        self.assertEqual(ret, 0)
        self.assertEqual(acl.get_soc_name(), "Ascend910")
        self.assertEqual(acl.rt.synchronize_stream(s), 0)
        self.assertEqual(acl.mdl.unload(mid), 0)
        self.assertEqual(acl.rt.destroy_stream(s), 0)

    def test_not_after_malloc(self):
        self.assertEqual(acl.init(), 0)
        self.assertEqual(acl.rt.set_device(0), 0)
        dev, _ = acl.rt.malloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        _, ret = acl.mdl.load_from_file(os.path.join(MODEL_DIR, "cnn910.om"))
        self.assertEqual(ret, acl.ACL_ERROR_RT_SOC_VERSION)
        self.assertIn("device memory is allocated", acl.get_recent_err_msg())
        self.assertEqual(acl.rt.free(dev), 0)

    def test_om_for_another_soc(self):
        with tempfile.NamedTemporaryFile("w", suffix=".ini") as f:
            f.write("[device]\nsoc = Ascend910\n")
            f.flush()
            self.assertEqual(acl.init(f.name), 0)
        self.assertEqual(acl.rt.set_device(0), 0)
        _, ret = acl.mdl.load_from_file(os.path.join(MODEL_DIR, "cnn.om"))
        self.assertEqual(ret, acl.ACL_ERROR_RT_SOC_VERSION)
        self.assertIn("compiled for Ascend310, but the device is Ascend910",
                      acl.get_recent_err_msg())


if __name__ == "__main__":
    unittest.main()
