/* acl.h: an AscendCL-shaped C API over the simulated device, so that a
 * program written for ACL (aclInit, aclrtSetDevice, aclmdlLoadFromFile,
 * aclmdlExecute...) runs on davinci-sim with few edits.
 *
 * The names, signatures, enum values and error numbers are ACL's for the
 * subset declared here; docs/runtime.md lists it and says how to port a
 * sample.  What differs because the device is simulated:
 *
 *  - Which chip.  aclInit(configPath) takes NULL, "" or a small ini file
 *        [device]
 *        soc = Ascend310                  ; a chip name or an .ini path
 *        set = hbm.bandwidth_gbps=102.4   ; any number of SoC overrides
 *    A file whose first character is '{' is an ACL JSON configuration (dump,
 *    profiling); it is accepted and ignored.  Without soc =, the chip is
 *    $DAVINCI_SOC if set; if neither names one, the device starts as
 *    "Ascend310" and the first model loaded makes it the SoC that model was
 *    compiled for (while no device memory is allocated, no other model is
 *    loaded and no event recorded; streams may exist).  aclsimSetSoc()
 *    overrides all of these between aclInit and the first aclrtSetDevice.
 *  - One device, id 0, run mode ACL_HOST (the host program is not on the
 *    device: model buffers must be device memory from aclrtMalloc).
 *  - Device pointers from aclrtMalloc are simulated device addresses cast to
 *    void *: never dereference them; pass them to aclrtMemcpy and to data
 *    buffers.  Host pointers (aclrtMallocHost, malloc, the stack) are real
 *    host memory.
 *  - Time.  Asynchronous calls only queue work.  The simulation runs at a
 *    synchronization point: aclrtSynchronizeStream/Device/Event,
 *    aclrtQueryEvent on a pending event, the synchronous aclrtMemcpy and
 *    aclmdlExecute, aclmdlLoadFromFile (it copies the weights), and the
 *    frees (aclrtFree, aclrtFreeHost, aclmdlUnload) when work is queued.
 *    Each runs ALL queued work of every stream to completion, so
 *    synchronizing one stream also completes the others' (a real device
 *    would have let them run on meanwhile; results are the same, and the
 *    device clock ends at the last task).  The host takes no simulated
 *    time: work queued after a synchronization starts at the device clock
 *    of its end.  aclsimGetDeviceTimeUs() reads that clock.
 *  - A host buffer given to aclrtMemcpyAsync must stay valid until the
 *    next synchronization (ACL asks the same: until the copy completes).
 *  - Executions of one model id are serialized in queue order, also
 *    across streams (they share the model's workspace); load the model
 *    twice to run two executions at once.
 *  - Not thread-safe: ACL is, this is not; call it from one thread.  The
 *    exception is callbacks (aclrtSubscribeReport below): aclrtProcessReport
 *    is called from the report thread, as in ACL.
 *
 * Every failing call returns its code and records a message for
 * aclGetRecentErrMsg() (the simulator's "core 0, pipe V, pc 12: ..." text,
 * naming the stream and task, when the simulation fails).  Misuse (NULL or
 * stale handles, unknown model ids, copies outside an allocation, calls
 * before aclInit or aclrtSetDevice) returns an error, never crashes.
 */
#ifndef DV_ACL_H
#define DV_ACL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int aclError;

/* Error codes (ACL's numbers). */
#define ACL_SUCCESS 0
#define ACL_ERROR_NONE 0 /* older ACL name of ACL_SUCCESS */
#define ACL_ERROR_INVALID_PARAM 100000       /* NULL or out-of-range argument */
#define ACL_ERROR_UNINITIALIZE 100001        /* called before aclInit */
#define ACL_ERROR_REPEAT_INITIALIZE 100002   /* aclInit twice; aclsimSetSoc too late */
#define ACL_ERROR_INVALID_FILE 100003        /* configuration file not readable */
#define ACL_ERROR_PARSE_FILE 100006          /* configuration file malformed */
#define ACL_ERROR_FILE_ATTR_INVALID 100008   /* a value in it is bad (unknown SoC...) */
#define ACL_ERROR_INVALID_MODEL_ID 100011    /* no model loaded with this id */
#define ACL_ERROR_PARSE_MODEL 100013         /* not a valid .om */
#define ACL_ERROR_READ_MODEL_FAILURE 100014  /* .om file not readable */
#define ACL_ERROR_MODEL_INPUT_NOT_MATCH 100017  /* input dataset vs the model */
#define ACL_ERROR_MODEL_OUTPUT_NOT_MATCH 100018 /* output dataset vs the model */
#define ACL_ERROR_REPEAT_FINALIZE 100037     /* aclFinalize twice */
#define ACL_ERROR_PROF_ALREADY_RUN 100042    /* aclprofInit twice, aclprofStart while running */
#define ACL_ERROR_PROF_NOT_RUN 100043        /* aclprof* before aclprofInit, Stop before Start */
#define ACL_ERROR_RT_INVALID_DEVICEID 107001 /* device id other than 0 */
#define ACL_ERROR_RT_CONTEXT_NULL 107002     /* called before aclrtSetDevice */
#define ACL_ERROR_RT_STREAM_SUBSCRIBE 107011 /* stream already (or not) subscribed */
#define ACL_ERROR_RT_THREAD_SUBSCRIBE 107012 /* aclrtProcessReport: thread subscribed to nothing */
#define ACL_ERROR_RT_STREAM_NO_CB_REG 107015 /* aclrtLaunchCallback: no thread subscribed */
#define ACL_ERROR_BAD_ALLOC 200000           /* host memory exhausted */
#define ACL_ERROR_API_NOT_SUPPORT 200001
#define ACL_ERROR_INVALID_RESOURCE_HANDLE 200005 /* unknown stream/event/desc/dataset/buffer */
#define ACL_ERROR_FEATURE_UNSUPPORTED 200006
#define ACL_ERROR_RT_MEMORY_ALLOCATION 207001 /* device memory exhausted */
#define ACL_ERROR_INTERNAL_ERROR 500000
#define ACL_ERROR_FAILURE 500001
#define ACL_ERROR_PROFILING_FAILURE 500005  /* the trace could not be written */
#define ACL_ERROR_RT_FAILURE 500003          /* the simulation failed (see the message) */
#define ACL_ERROR_RT_EVENT_NOT_COMPLETE 507006 /* elapsed time of an event not yet fired */
#define ACL_ERROR_RT_SOC_VERSION 507008      /* .om compiled for another SoC */
#define ACL_ERROR_RT_REPORT_TIMEOUT 507012   /* aclrtProcessReport: no callback in time */

/* Opaque handles.  Streams, events and contexts are pointers, as in ACL;
 * NULL as a stream means the default stream. */
typedef void *aclrtStream;
typedef void *aclrtEvent;
typedef void *aclrtContext;
typedef struct aclmdlDesc aclmdlDesc;
typedef struct aclmdlDataset aclmdlDataset;
typedef struct aclDataBuffer aclDataBuffer;

typedef enum {
	ACL_DT_UNDEFINED = -1,
	ACL_FLOAT = 0,
	ACL_FLOAT16 = 1,
	ACL_INT8 = 2,
	ACL_INT32 = 3,
	ACL_UINT8 = 4,
	ACL_INT16 = 6,
	ACL_UINT16 = 7,
	ACL_UINT32 = 8,
	ACL_INT64 = 9,
	ACL_UINT64 = 10,
	ACL_DOUBLE = 11,
	ACL_BOOL = 12,
	ACL_STRING = 13,
	ACL_COMPLEX64 = 16,
	ACL_COMPLEX128 = 17,
	ACL_BF16 = 27
} aclDataType;

typedef enum {
	ACL_FORMAT_UNDEFINED = -1,
	ACL_FORMAT_NCHW = 0,
	ACL_FORMAT_NHWC = 1,
	ACL_FORMAT_ND = 2,
	ACL_FORMAT_NC1HWC0 = 3,
	ACL_FORMAT_FRACTAL_Z = 4,
	ACL_FORMAT_FRACTAL_NZ = 29
} aclFormat;

typedef enum { ACL_DEVICE = 0, ACL_HOST = 1 } aclrtRunMode;

/* Accepted and ignored: simulated device memory has no page sizes. */
typedef enum {
	ACL_MEM_MALLOC_HUGE_FIRST = 0,
	ACL_MEM_MALLOC_HUGE_ONLY = 1,
	ACL_MEM_MALLOC_NORMAL_ONLY = 2
} aclrtMemMallocPolicy;

typedef enum {
	ACL_MEMCPY_HOST_TO_HOST = 0,
	ACL_MEMCPY_HOST_TO_DEVICE = 1,
	ACL_MEMCPY_DEVICE_TO_HOST = 2,
	ACL_MEMCPY_DEVICE_TO_DEVICE = 3
} aclrtMemcpyKind;

typedef enum {
	ACL_DDR_MEM = 0,
	ACL_HBM_MEM = 1,
	ACL_DDR_MEM_HUGE = 2,
	ACL_DDR_MEM_NORMAL = 3,
	ACL_HBM_MEM_HUGE = 4,
	ACL_HBM_MEM_NORMAL = 5,
	ACL_DDR_MEM_P2P_HUGE = 6,
	ACL_DDR_MEM_P2P_NORMAL = 7,
	ACL_HBM_MEM_P2P_HUGE = 8,
	ACL_HBM_MEM_P2P_NORMAL = 9
} aclrtMemAttr;

typedef enum {
	ACL_EVENT_STATUS_COMPLETE = 0,
	ACL_EVENT_STATUS_NOT_READY = 1,
	ACL_EVENT_STATUS_RESERVED = 2
} aclrtEventStatus;

#define ACL_MAX_DIM_CNT 128
#define ACL_MAX_TENSOR_NAME_LEN 128

typedef struct aclmdlIODims {
	char name[ACL_MAX_TENSOR_NAME_LEN]; /* truncated to fit, NUL-terminated */
	size_t dimCount;
	int64_t dims[ACL_MAX_DIM_CNT];
} aclmdlIODims;

/* --- process and device --------------------------------------------------- */

/* configPath: NULL, "", an ACL JSON file (ignored) or the ini file above.
 * The SoC is loaded here, so a bad chip name fails here.  aclInit after
 * aclFinalize starts afresh. */
aclError aclInit(const char *configPath);
/* Resets the device if still set and releases everything left. */
aclError aclFinalize(void);

/* Reference counted, as in ACL: the device (and every stream, event,
 * allocation and model on it) goes when aclrtResetDevice has been called
 * as often as aclrtSetDevice. */
aclError aclrtSetDevice(int32_t deviceId);
aclError aclrtResetDevice(int32_t deviceId);
aclError aclrtGetDevice(int32_t *deviceId);
aclError aclrtGetDeviceCount(uint32_t *count); /* always 1 */
aclError aclrtGetRunMode(aclrtRunMode *runMode); /* always ACL_HOST */
/* The simulated chip's name ([soc] name= of its .ini, e.g. "Ascend310"),
 * known from aclInit on; NULL before aclInit and after aclFinalize. */
const char *aclrtGetSocName(void);

/* One implicit context per device: creating one takes a device reference
 * (like aclrtSetDevice), destroying it drops it. */
aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId);
aclError aclrtDestroyContext(aclrtContext context);
aclError aclrtSetCurrentContext(aclrtContext context);
aclError aclrtGetCurrentContext(aclrtContext *context);

/* --- streams and events --------------------------------------------------- */

aclError aclrtCreateStream(aclrtStream *stream);
/* Work still queued on it runs at the next synchronization. */
aclError aclrtDestroyStream(aclrtStream stream);
/* Runs all queued work (of every stream; see above). */
aclError aclrtSynchronizeStream(aclrtStream stream);
aclError aclrtSynchronizeDevice(void);

aclError aclrtCreateEvent(aclrtEvent *event);
aclError aclrtDestroyEvent(aclrtEvent event);
/* The event fires when the work queued on stream before it has completed. */
aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);
/* Work queued on stream from now on waits for the event's latest record
 * (none yet: no wait). */
aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event);
aclError aclrtSynchronizeEvent(aclrtEvent event);
/* A pending event runs the simulation (a host polling in a loop would
 * otherwise wait forever: the device only moves when simulated), so the
 * answer is COMPLETE unless the work failed. */
aclError aclrtQueryEvent(aclrtEvent event, aclrtEventStatus *status);
/* Simulated milliseconds between two fired events (SoC clock). */
aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent);

/* --- callbacks ------------------------------------------------------------ */

typedef void (*aclrtCallback)(void *userData);
typedef enum {
	ACL_CALLBACK_NO_BLOCK = 0, /* the stream goes on without waiting for it */
	ACL_CALLBACK_BLOCK = 1     /* the stream waits until it has run */
} aclrtCallbackBlockType;

/* Callbacks run on the thread that calls aclrtProcessReport, the one
 * subscribed to the stream (threadId: its pthread_self(), cast), in the
 * order the device reaches them (stream order within a stream).  Queued
 * work runs at synchronization points (above), so a callback becomes due
 * when the synchronization that runs the work queued before it on its
 * stream has simulated that work; a synchronization that makes a BLOCK
 * callback due returns once the report thread has run it (the host thread
 * waits meanwhile, so a BLOCK callback may call this API; a NO_BLOCK one
 * runs beside the host thread and should touch host data only).  A BLOCK
 * callback due to the synchronizing thread itself is not waited for (it
 * could never run): that thread runs it with aclrtProcessReport later.
 * One stream has at most one subscribed thread; a thread may serve many.
 * The wait for a BLOCK callback has no limit, as a device's stream has
 * none: keep the report thread calling aclrtProcessReport until the
 * stream is unsubscribed. */
aclError aclrtSubscribeReport(uint64_t threadId, aclrtStream stream);
/* Callbacks of the stream not run yet are dropped. */
aclError aclrtUnSubscribeReport(uint64_t threadId, aclrtStream stream);
/* ACL_ERROR_RT_STREAM_NO_CB_REG when no thread is subscribed to stream. */
aclError aclrtLaunchCallback(aclrtCallback fn, void *userData, aclrtCallbackBlockType blockType,
			     aclrtStream stream);
/* Runs the calling thread's next due callback, waiting up to timeout ms
 * (-1: no limit) for one: ACL_SUCCESS once it has run,
 * ACL_ERROR_RT_REPORT_TIMEOUT if none came, ACL_ERROR_RT_THREAD_SUBSCRIBE
 * if the thread is subscribed to no stream.  Called on another thread
 * than the rest of the API, it records no aclGetRecentErrMsg text (that
 * buffer is the host thread's). */
aclError aclrtProcessReport(int32_t timeout);

/* --- memory --------------------------------------------------------------- */

/* Device memory: *devPtr is a simulated address (never dereference it).
 * Copies are checked against size, not the allocation's rounding. */
aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtFree(void *devPtr);
/* The device memory ([hbm] size_mb of the SoC) free and in total, in
 * bytes.  The simulated device has one pool: ACL_DDR_MEM* and ACL_HBM_MEM*
 * all report it; the P2P attributes report 0 of 0 (one device). */
aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total);
typedef enum {
	ACL_MEM_LOCATION_TYPE_HOST = 0,        /* from aclrtMallocHost */
	ACL_MEM_LOCATION_TYPE_DEVICE = 1,      /* inside an aclrtMalloc allocation */
	ACL_MEM_LOCATION_TYPE_UNREGISTERED = 2 /* anything else */
} aclrtMemLocationType;

typedef struct aclrtMemLocation {
	uint32_t id; /* the device (0) for device memory */
	aclrtMemLocationType type;
} aclrtMemLocation;

typedef struct aclrtPtrAttributes {
	aclrtMemLocation location;
	uint32_t pageSize; /* 4096: simulated memory has no huge pages */
	uint32_t rsv[4];
} aclrtPtrAttributes;

/* Where ptr lies: any address inside a live aclrtMalloc allocation is
 * device memory; a pointer aclrtMallocHost returned is host memory; the
 * rest is unregistered (also stale pointers).  After aclInit. */
aclError aclrtPointerGetAttributes(const void *ptr, aclrtPtrAttributes *attributes);

/* Host memory (plain malloc'd memory here). */
aclError aclrtMallocHost(void **hostPtr, size_t size);
aclError aclrtFreeHost(void *hostPtr);
/* Synchronous: queued on the default stream and simulated (PCIe time for
 * host <-> device).  count must not exceed destMax; device ranges must lie
 * inside one aclrtMalloc allocation. */
aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
		     aclrtMemcpyKind kind);
/* Queued on stream (NULL: the default stream); host <-> device and device
 * <-> device only. */
aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
			  aclrtMemcpyKind kind, aclrtStream stream);
/* Device memory: after the queued work, and taking no simulated time. */
aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count);

/* --- models --------------------------------------------------------------- */

/* Reads and validates the .om (it must be compiled for the device's SoC)
 * and copies its weights to the device (simulated, so this synchronizes). */
aclError aclmdlLoadFromFile(const char *modelPath, uint32_t *modelId);
/* The same from the .om's bytes in host memory (e.g. read by the caller). */
aclError aclmdlLoadFromMem(const void *model, size_t modelSize, uint32_t *modelId);
aclError aclmdlUnload(uint32_t modelId);
/* The workspace and weight bytes the .om needs (read from the file, which
 * need not be compiled for the device's SoC); after aclInit. */
aclError aclmdlQuerySize(const char *fileName, size_t *workSize, size_t *weightSize);

aclmdlDesc *aclmdlCreateDesc(void);
aclError aclmdlDestroyDesc(aclmdlDesc *modelDesc);
/* Fills the desc with a copy of the model's I/O descriptors (it stays
 * valid after aclmdlUnload). */
aclError aclmdlGetDesc(aclmdlDesc *modelDesc, uint32_t modelId);
/* On a bad desc or index these return 0, "", ACL_DT_UNDEFINED or
 * ACL_FORMAT_UNDEFINED and record the reason for aclGetRecentErrMsg. */
size_t aclmdlGetNumInputs(aclmdlDesc *modelDesc);
size_t aclmdlGetNumOutputs(aclmdlDesc *modelDesc);
size_t aclmdlGetInputSizeByIndex(aclmdlDesc *modelDesc, size_t index);
size_t aclmdlGetOutputSizeByIndex(aclmdlDesc *modelDesc, size_t index);
aclError aclmdlGetInputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims);
aclError aclmdlGetOutputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims);
/* Shapes are static: the same as aclmdlGetOutputDims. */
aclError aclmdlGetCurOutputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims);
const char *aclmdlGetInputNameByIndex(const aclmdlDesc *modelDesc, size_t index);
const char *aclmdlGetOutputNameByIndex(const aclmdlDesc *modelDesc, size_t index);
aclError aclmdlGetInputIndexByName(const aclmdlDesc *modelDesc, const char *name,
				   size_t *index);
aclError aclmdlGetOutputIndexByName(const aclmdlDesc *modelDesc, const char *name,
				    size_t *index);
/* The host-side type and layout (e.g. ACL_FLOAT, ACL_FORMAT_NCHW). */
aclDataType aclmdlGetInputDataType(const aclmdlDesc *modelDesc, size_t index);
aclDataType aclmdlGetOutputDataType(const aclmdlDesc *modelDesc, size_t index);
aclFormat aclmdlGetInputFormat(const aclmdlDesc *modelDesc, size_t index);
aclFormat aclmdlGetOutputFormat(const aclmdlDesc *modelDesc, size_t index);

/* Dynamic batch (simatc --dynamic_batch_size): the model gets one more
 * input, last, named ACL_DYNAMIC_TENSOR_NAME (8 bytes: allocate it with
 * aclrtMalloc, add it to the input dataset); aclmdlSetDynamicBatchSize
 * writes the batch into it, and each execution runs the program of the
 * batch it holds then.  The data inputs and outputs keep the largest
 * batch's sizes; a smaller batch uses the first rows of each. */
#define ACL_MAX_BATCH_NUM 128
#define ACL_DYNAMIC_TENSOR_NAME "ascend_mbatch_shape_data"
typedef struct aclmdlBatch {
	size_t batchCount; /* 0: the model has one batch size */
	uint64_t batch[ACL_MAX_BATCH_NUM];
} aclmdlBatch;
aclError aclmdlGetDynamicBatch(const aclmdlDesc *modelDesc, aclmdlBatch *batch);
/* index: ACL_DYNAMIC_TENSOR_NAME's (aclmdlGetInputIndexByName); batchSize
 * must be one the model was compiled for (ACL_ERROR_INVALID_PARAM
 * otherwise, as in CANN: simrun --dynamic-batch pads, ACL does not). */
aclError aclmdlSetDynamicBatchSize(uint32_t modelId, aclmdlDataset *dataset, size_t index,
				   uint64_t batchSize);
/* Dynamic dims (simatc --dynamic_dims): the same extra input, 8 bytes per
 * -1 dimension.  A gear is a profile given as its inputs' shapes one after
 * another (dimCount their ranks' sum; name unused), as in CANN; index is
 * reserved (-1) for the getters, ACL_DYNAMIC_TENSOR_NAME's for the setter,
 * whose dims must be one of the gears.  The desc's input and output sizes
 * are the largest gear's; each execution runs the program of the dims its
 * extra input holds then.  A model without dynamic dims has 0 gears. */
aclError aclmdlGetInputDynamicGearCount(const aclmdlDesc *modelDesc, size_t index,
					size_t *gearCount);
aclError aclmdlGetInputDynamicDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims,
				   size_t gearCount);
aclError aclmdlSetInputDynamicDims(uint32_t modelId, aclmdlDataset *dataset, size_t index,
				   const aclmdlIODims *dims);

/* A dataset holds data buffers in input (or output) order; destroying it
 * leaves its buffers alone (destroy them yourself, as in ACL). */
aclmdlDataset *aclmdlCreateDataset(void);
aclError aclmdlDestroyDataset(const aclmdlDataset *dataset);
aclError aclmdlAddDatasetBuffer(aclmdlDataset *dataset, aclDataBuffer *dataBuffer);
size_t aclmdlGetDatasetNumBuffers(const aclmdlDataset *dataset);
aclDataBuffer *aclmdlGetDatasetBuffer(const aclmdlDataset *dataset, size_t index);

/* A (pointer, size) pair; the memory is the caller's. */
aclDataBuffer *aclCreateDataBuffer(void *data, size_t size);
aclError aclDestroyDataBuffer(const aclDataBuffer *dataBuffer);
aclError aclUpdateDataBuffer(aclDataBuffer *dataBuffer, void *data, size_t size);
void *aclGetDataBufferAddr(const aclDataBuffer *dataBuffer);
size_t aclGetDataBufferSizeV2(const aclDataBuffer *dataBuffer);
uint32_t aclGetDataBufferSize(const aclDataBuffer *dataBuffer); /* older, 32-bit */
/* Bytes per element; 0 for ACL_DT_UNDEFINED and ACL_STRING. */
size_t aclDataTypeSize(aclDataType dataType);

/* Every buffer must be device memory (aclrtMalloc) holding at least the
 * model's size for that input or output.  aclmdlExecute queues on the
 * default stream and synchronizes; aclmdlExecuteAsync only queues. */
aclError aclmdlExecute(uint32_t modelId, const aclmdlDataset *input, aclmdlDataset *output);
aclError aclmdlExecuteAsync(uint32_t modelId, const aclmdlDataset *input,
			    aclmdlDataset *output, aclrtStream stream);

/* --- profiling (msprof's aclprof* API) ------------------------------------ */

/* aclprofInit(dir) .. aclprofStart(config) .. work .. aclprofStop(config)
 * writes the trace of the work in between into dir, as simrun --trace
 * does (docs/traces.md): op_summary.csv, task_time.csv, timeline.json
 * (with every pipe's busy spans) and summary.json.  The summary and the
 * tensor columns describe the model executed last; tasks of other models
 * and copies are listed too.  aclprofStop synchronizes first.  Nothing is
 * written when no model ran.  The configuration's metrics and data types
 * are accepted and ignored: the simulator records everything. */
#define ACL_PROF_ACL_API 0x0001ULL
#define ACL_PROF_TASK_TIME 0x0002ULL
#define ACL_PROF_AICORE_METRICS 0x0004ULL
#define ACL_PROF_AICPU 0x0008ULL
#define ACL_PROF_L2CACHE 0x0010ULL
#define ACL_PROF_HCCL_TRACE 0x0020ULL
#define ACL_PROF_TRAINING_TRACE 0x0040ULL
#define ACL_PROF_MSPROFTX 0x0080ULL
#define ACL_PROF_RUNTIME_API 0x0100ULL

typedef enum {
	ACL_AICORE_ARITHMETIC_UTILIZATION = 0,
	ACL_AICORE_PIPE_UTILIZATION = 1,
	ACL_AICORE_MEMORY_BANDWIDTH = 2,
	ACL_AICORE_L0B_AND_WIDTH = 3,
	ACL_AICORE_RESOURCE_CONFLICT_RATIO = 4,
	ACL_AICORE_MEMORY_UB = 5,
	ACL_AICORE_NONE = 0xFF
} aclprofAicoreMetrics;

typedef struct aclprofConfig aclprofConfig;
typedef struct aclprofAicoreEvents aclprofAicoreEvents; /* pass NULL */

/* After aclInit; the directory is created if missing.  length is
 * strlen(profilerResultPath). */
aclError aclprofInit(const char *profilerResultPath, size_t length);
/* Stops a running profile without writing it. */
aclError aclprofFinalize(void);
/* deviceIdList must be {0}; NULL on a bad argument (with a message). */
aclprofConfig *aclprofCreateConfig(uint32_t *deviceIdList, uint32_t deviceNums,
				   aclprofAicoreMetrics aicoreMetrics,
				   const aclprofAicoreEvents *aicoreEvents, uint64_t dataTypeConfig);
aclError aclprofDestroyConfig(const aclprofConfig *profilerConfig);
/* The device must be set; the trace covers the work queued from here. */
aclError aclprofStart(const aclprofConfig *profilerConfig);
aclError aclprofStop(const aclprofConfig *profilerConfig);

/* --- errors --------------------------------------------------------------- */

/* The message of the latest failed call (ACL's API), or NULL if none has
 * failed.  Kept until the next failure. */
const char *aclGetRecentErrMsg(void);
/* Not ACL: the code's name and meaning, e.g. "ACL_ERROR_INVALID_PARAM
 * (invalid parameter)"; never NULL. */
const char *aclGetErrorString(aclError error);

/* --- simulator extensions (not ACL) ----------------------------------------- */

/* Choose the SoC: a chip name ("Ascend310", "Ascend910", "Ascend310P3") or
 * an .ini path.  After aclInit, before the first aclrtSetDevice (else
 * ACL_ERROR_REPEAT_INITIALIZE).  The config file's set = overrides still
 * apply on top. */
aclError aclsimSetSoc(const char *socNameOrIni);
/* The simulated device clock in microseconds: where the last completed
 * work ended (it moves only at synchronization points). */
aclError aclsimGetDeviceTimeUs(double *us);
/* Called around the waits of a synchronization for BLOCK callbacks:
 * release() before, reacquire(its result) after, so that a host thread
 * holding a lock the callback needs (an interpreter's, as Python's `acl`
 * module does with its GIL) lets go while it waits.  NULL, NULL: none. */
aclError aclsimSetWaitHooks(void *(*release)(void), void (*reacquire)(void *token));

#ifdef __cplusplus
}
#endif

#endif
