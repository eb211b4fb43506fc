/* acl_mem.c: device and host memory (aclrtMalloc, aclrtMallocHost and
 * their frees, aclrtGetMemInfo, aclrtPointerGetAttributes) and the copies
 * and fills on it (aclrtMemcpy*, aclrtMemset).  The table of aclrtMalloc
 * allocations tells a device pointer from a host one and bounds every
 * copy. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "acl_int.h"

uint64_t acl_dev_addr(const void *p) { return (uint64_t)(uintptr_t)p; }

/* The allocation holding [p, p + n), or NULL. */
const struct dev_alloc *acl_dev_range(const void *p, uint64_t n)
{
	uint64_t a = acl_dev_addr(p);
	for (size_t i = 0; i < acl_state.nallocs; i++) {
		const struct dev_alloc *al = &acl_state.allocs[i];
		if (a >= al->addr && a - al->addr < al->size)
			return n <= al->size - (a - al->addr) ? al : NULL;
	}
	return NULL;
}

static int is_dev(const void *p) { return acl_dev_range(p, 0) != NULL; }

/* One memory pool, [hbm] size_mb of the SoC (HBM or DDR alike): every
 * non-P2P attribute reports it; P2P memory (for copies between devices)
 * does not exist with one device, so it is 0 of 0, as ACL reports memory
 * the hardware lacks. */
aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *freeBytes, size_t *total)
{
	NEED_DEVICE();
	if (!freeBytes || !total)
		return FAIL(ACL_ERROR_INVALID_PARAM, "%s is NULL", !freeBytes ? "free" : "total");
	if ((unsigned)attr > ACL_HBM_MEM_P2P_NORMAL)
		return FAIL(ACL_ERROR_INVALID_PARAM, "unknown aclrtMemAttr %d", (int)attr);
	uint64_t size = (uint64_t)acl_state.cfg.hbm_size_mb << 20;
	uint64_t used = sim_gm_used(rt_device_sim(acl_state.dev));
	int p2p = attr >= ACL_DDR_MEM_P2P_HUGE;
	*total = p2p ? 0 : (size_t)size;
	*freeBytes = p2p || used >= size ? 0 : (size_t)(size - used);
	return ACL_SUCCESS;
}

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
	(void)policy; /* simulated memory has no page sizes */
	NEED_DEVICE();
	if (!devPtr || size == 0)
		return FAIL(ACL_ERROR_INVALID_PARAM, "%s", !devPtr ? "devPtr is NULL" : "size is 0");
	if (acl_grow((void **)&acl_state.allocs, &acl_state.capallocs, acl_state.nallocs,
		     sizeof *acl_state.allocs))
		return FAIL(ACL_ERROR_BAD_ALLOC, "out of memory");
	struct sim_device *sim = rt_device_sim(acl_state.dev);
	/* Device buffers get this much beyond what was asked for: kernels move
	 * whole 32-byte blocks and 256-byte vector repeats past a tensor's last
	 * element (runtime.c gives its own buffers the same). */
	uint64_t a = (uint64_t)size <= UINT64_MAX - RT_BUFFER_SLACK
			     ? sim_gm_alloc(sim, size + RT_BUFFER_SLACK)
			     : 0;
	if (!a)
		return FAIL(ACL_ERROR_RT_MEMORY_ALLOCATION,
			    "%zu bytes: the device memory (%lld MiB, %llu bytes in use) is exhausted",
			    size, (long long)acl_state.cfg.hbm_size_mb,
			    (unsigned long long)sim_gm_used(sim));
	if (a > UINTPTR_MAX) { /* a 32-bit host cannot hold the address in a pointer */
		sim_gm_free(sim, a);
		return FAIL(ACL_ERROR_RT_MEMORY_ALLOCATION, "device address 0x%llx does not fit "
			    "a host pointer", (unsigned long long)a);
	}
	acl_state.allocs[acl_state.nallocs++] = (struct dev_alloc){ a, size };
	*devPtr = (void *)(uintptr_t)a;
	return ACL_SUCCESS;
}

aclError aclrtFree(void *devPtr)
{
	NEED_DEVICE();
	if (!devPtr)
		return FAIL(ACL_ERROR_INVALID_PARAM, "devPtr is NULL");
	size_t i;
	for (i = 0; i < acl_state.nallocs && acl_state.allocs[i].addr != acl_dev_addr(devPtr); i++)
		;
	if (i == acl_state.nallocs)
		return FAIL(ACL_ERROR_INVALID_PARAM, "%p is not an address aclrtMalloc returned "
			    "(or it was freed)", devPtr);
	/* queued work may still use it (aclrtFree waits for the device, as
	 * cudaFree does) */
	aclError e = acl_state.pending ? acl_run_queued(__func__) : ACL_SUCCESS;
	sim_gm_free(rt_device_sim(acl_state.dev), acl_state.allocs[i].addr);
	acl_state.allocs[i] = acl_state.allocs[--acl_state.nallocs];
	return e;
}

aclError aclrtPointerGetAttributes(const void *ptr, aclrtPtrAttributes *attributes)
{
	NEED_INIT();
	if (!attributes)
		return FAIL(ACL_ERROR_INVALID_PARAM, "attributes is NULL");
	memset(attributes, 0, sizeof *attributes);
	attributes->pageSize = 4096;
	attributes->location.type = ptr && is_dev(ptr)	     ? ACL_MEM_LOCATION_TYPE_DEVICE
				    : ptr && acl_h_has(&acl_state.hosts, ptr) ? ACL_MEM_LOCATION_TYPE_HOST
								  : ACL_MEM_LOCATION_TYPE_UNREGISTERED;
	return ACL_SUCCESS;
}

aclError aclrtMallocHost(void **hostPtr, size_t size)
{
	NEED_INIT();
	if (!hostPtr || size == 0)
		return FAIL(ACL_ERROR_INVALID_PARAM, "%s", !hostPtr ? "hostPtr is NULL" : "size is 0");
	void *p = malloc(size);
	if (!p || acl_h_add(&acl_state.hosts, p)) {
		free(p);
		return FAIL(ACL_ERROR_BAD_ALLOC, "%zu bytes of host memory: out of memory", size);
	}
	*hostPtr = p;
	return ACL_SUCCESS;
}

aclError aclrtFreeHost(void *hostPtr)
{
	NEED_INIT();
	if (!hostPtr || !acl_h_has(&acl_state.hosts, hostPtr))
		return FAIL(ACL_ERROR_INVALID_PARAM, "%p is not memory from aclrtMallocHost", hostPtr);
	/* a queued copy may still read or write it */
	aclError e = acl_state.dev && acl_state.pending ? acl_run_queued(__func__) : ACL_SUCCESS;
	acl_h_del(&acl_state.hosts, hostPtr);
	free(hostPtr);
	return e;
}

static const char *const kind_names[] = { "ACL_MEMCPY_HOST_TO_HOST", "ACL_MEMCPY_HOST_TO_DEVICE",
					  "ACL_MEMCPY_DEVICE_TO_HOST",
					  "ACL_MEMCPY_DEVICE_TO_DEVICE" };

/* One side of a copy: device memory holding count bytes, or host memory
 * (which must not be a device address). */
static aclError check_side(const char *fn, const char *which, const void *p, size_t count,
			   int want_dev, aclrtMemcpyKind kind)
{
	if (want_dev && !acl_dev_range(p, count))
		return acl_fail(ACL_ERROR_INVALID_PARAM, fn,
				"%s: %s %p + %zu bytes is not inside one aclrtMalloc allocation%s",
				kind_names[kind], which, p, count,
				is_dev(p) ? " (the copy runs past its end)" : "");
	if (!want_dev && is_dev(p))
		return acl_fail(ACL_ERROR_INVALID_PARAM, fn,
				"%s: %s %p is device memory from aclrtMalloc, not host memory",
				kind_names[kind], which, p);
	return ACL_SUCCESS;
}

static aclError check_copy(const char *fn, const void *dst, size_t destMax, const void *src,
			   size_t count, aclrtMemcpyKind kind)
{
	if (!dst || !src)
		return acl_fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL", !dst ? "dst" : "src");
	if ((unsigned)kind > ACL_MEMCPY_DEVICE_TO_DEVICE)
		return acl_fail(ACL_ERROR_INVALID_PARAM, fn, "unknown aclrtMemcpyKind %d", (int)kind);
	if (count > destMax)
		return acl_fail(ACL_ERROR_INVALID_PARAM, fn, "count %zu exceeds destMax %zu", count,
				destMax);
	int dst_dev = kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
	int src_dev = kind == ACL_MEMCPY_DEVICE_TO_HOST || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
	aclError e = check_side(fn, "dst", dst, count, dst_dev, kind);
	return e != ACL_SUCCESS ? e : check_side(fn, "src", src, count, src_dev, kind);
}

static aclError queue_copy(const char *fn, void *dst, const void *src, size_t count,
			   aclrtMemcpyKind kind, struct rt_stream *s)
{
	char err[512];
	int rc;
	/* the runtime's host pointer is read for H2D, written for D2H */
	if (kind == ACL_MEMCPY_HOST_TO_DEVICE)
		rc = rt_memcpy_async(s, SIM_COPY_H2D, (void *)(uintptr_t)src, acl_dev_addr(dst), 0, count,
				     err, sizeof err);
	else if (kind == ACL_MEMCPY_DEVICE_TO_HOST)
		rc = rt_memcpy_async(s, SIM_COPY_D2H, dst, acl_dev_addr(src), 0, count, err, sizeof err);
	else
		rc = rt_memcpy_async(s, SIM_COPY_D2D, NULL, acl_dev_addr(dst), acl_dev_addr(src), count,
				     err, sizeof err);
	if (rc)
		return acl_fail(ACL_ERROR_INVALID_PARAM, fn, "%s", err);
	acl_state.pending = 1;
	return ACL_SUCCESS;
}

aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
		     aclrtMemcpyKind kind)
{
	NEED_DEVICE();
	aclError e = check_copy(__func__, dst, destMax, src, count, kind);
	if (e != ACL_SUCCESS)
		return e;
	if (kind == ACL_MEMCPY_HOST_TO_HOST) {
		memmove(dst, src, count);
		return ACL_SUCCESS;
	}
	e = queue_copy(__func__, dst, src, count, kind, rt_default_stream(acl_state.dev));
	return e != ACL_SUCCESS ? e : acl_run_queued(__func__);
}

aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
			  aclrtMemcpyKind kind, aclrtStream stream)
{
	NEED_DEVICE();
	struct rt_stream *s;
	aclError e = acl_get_stream(__func__, stream, &s);
	if (e == ACL_SUCCESS)
		e = check_copy(__func__, dst, destMax, src, count, kind);
	if (e != ACL_SUCCESS)
		return e;
	if (kind == ACL_MEMCPY_HOST_TO_HOST)
		return FAIL(ACL_ERROR_FEATURE_UNSUPPORTED, "host-to-host copies are not queued on "
			    "the device: use aclrtMemcpy or memcpy");
	return queue_copy(__func__, dst, src, count, kind, s);
}

aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count)
{
	NEED_DEVICE();
	if (!devPtr)
		return FAIL(ACL_ERROR_INVALID_PARAM, "devPtr is NULL");
	if (count > maxCount)
		return FAIL(ACL_ERROR_INVALID_PARAM, "count %zu exceeds maxCount %zu", count, maxCount);
	if (!acl_dev_range(devPtr, count))
		return FAIL(ACL_ERROR_INVALID_PARAM, "%p + %zu bytes is not inside one aclrtMalloc "
			    "allocation", devPtr, count);
	aclError e = acl_state.pending ? acl_run_queued(__func__) : ACL_SUCCESS; /* after the queued work */
	if (e != ACL_SUCCESS)
		return e;
	void *p = sim_gm_ptr(rt_device_sim(acl_state.dev), acl_dev_addr(devPtr), count);
	if (p && count)
		memset(p, value & 0xff, count);
	return ACL_SUCCESS;
}
