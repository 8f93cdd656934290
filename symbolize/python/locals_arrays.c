// SPDX-License-Identifier: MIT
/*
 * dump --locals' arrays: a numpy array and a torch.Tensor shown by what
 * a reader of a training loop wants to know, dtype, shape and device,
 * read from the objects' headers; their data is never read.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "symbolize/python/python.h"

#define DIMS_SHOWN 8

static int read_u64(const struct py_target *t, uint64_t addr, uint64_t *out)
{
	return py_read(t, addr, out, sizeof(*out));
}

/* "(3, 4)", "(3,)", "()" or "(1, 2, ..., 8, ...)" after used chars of buf. */
static size_t shape_render(const int64_t *dims, int64_t nd, char *buf, size_t len, size_t used)
{
	used += (size_t)snprintf(buf + used, len - used, "(");
	for (int64_t i = 0; i < nd && i < DIMS_SHOWN && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%" PRId64, i ? ", " : "", dims[i]);
	if (used < len)
		used += (size_t)snprintf(buf + used, len - used, "%s)",
					 nd > DIMS_SHOWN ? ", ..." : nd == 1 ? "," : "");
	return used;
}

/* numpy's PyArrayObject and PyArray_Descr, as numpy 1.x and 2.x lay them
 * out (ndarraytypes.h; stable ABI): after the object's header come data,
 * nd, dimensions; descr is the sixth pointer. A descr's kind, type and
 * byteorder chars and int type_num follow its header and typeobj in both;
 * elsize moved (int in 1.x, npy_intp in 2.x), so the dtype is named by
 * type_num. */
#define NDARRAY_ND 8
#define NDARRAY_DIMENSIONS 16
#define NDARRAY_DESCR 40
#define DESCR_TYPE_NUM 12


static const char *const npy_type_names[] = {
	"bool", "int8", "uint8", "int16", "uint16", "int32", "uint32",
	"int64", "uint64", /* NPY_LONG: 64 bits on LP64 */
	"longlong", "ulonglong", "float32", "float64", "longdouble",
	"complex64", "complex128", "clongdouble", "object", "bytes", "str",
	"void", "datetime64", "timedelta64", "float16",
};

/* "<ndarray float64 (3, 4)>": the dtype and shape, read from the array's
 * header and descr. */
static int render_ndarray(const struct py_target *t, uint64_t obj, struct py_local *v)
{
	uint64_t head = t->l.object_type + 8; /* ob_type ends the header in every build */
	int64_t dims[DIMS_SHOWN];
	uint64_t dims_at, descr;
	int32_t nd, type_num;
	size_t used;
	int ret = py_read(t, obj + head + NDARRAY_ND, &nd, sizeof(nd));

	if (!ret)
		ret = read_u64(t, obj + head + NDARRAY_DIMENSIONS, &dims_at);
	if (!ret)
		ret = read_u64(t, obj + head + NDARRAY_DESCR, &descr);
	if (!ret)
		ret = py_read(t, descr + head + DESCR_TYPE_NUM, &type_num, sizeof(type_num));
	if (ret < 0)
		return ret;
	/* NPY_MAXDIMS is 64 in numpy 2 */
	if (nd < 0 || nd > 64 || (nd && !dims_at))
		return -EPROTO;
	if (nd && (ret = py_read(t, dims_at, dims, sizeof(dims[0]) * (nd < DIMS_SHOWN ? nd : DIMS_SHOWN))) < 0)
		return ret;
	if (type_num >= 0 && type_num < (int32_t)(sizeof(npy_type_names) / sizeof(npy_type_names[0])))
		used = (size_t)snprintf(v->value, sizeof(v->value), "<ndarray %s ", npy_type_names[type_num]);
	else
		used = (size_t)snprintf(v->value, sizeof(v->value), "<ndarray dtype#%d ", type_num);
	used = shape_render(dims, nd, v->value, sizeof(v->value), used);
	snprintf(v->value + used, sizeof(v->value) - used, ">");
	return 0;
}

/*
 * A torch.Tensor (THPVariable) holds an at::Tensor, one pointer to a
 * c10::TensorImpl: right after the object's header in torch 2.x; in 1.x
 * behind MaybeOwned's bool (and, borrowed, one pointer further). A
 * TensorImpl is C++ whose fields before its shape changed from release to
 * release, so the shape is found by what it is, not by an offset: the
 * SizesAndStrides (ndim, then five sizes and five strides inline, or a
 * pointer to them past five), storage_offset, numel (the product of the
 * sizes) and data_type_ (a ScalarType as uint16) with device_opt_ (an
 * optional<Device>: c10::optional put its flag first, std::optional, 2.x,
 * last).
 */
#define TENSOR_IMPL_WORDS 40
#define SIZES_INLINE 5

static const char *const scalar_type_names[] = {
	"uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
	"complex32", "complex64", "complex128", "bool", "qint8", "quint8", "qint32",
	"bfloat16", "quint4x2", "quint2x4", "bits1x8", "bits2x4", "bits4x2", "bits8",
	"bits16", "float8_e5m2", "float8_e4m3fn", "float8_e5m2fnuz", "float8_e4m3fnuz",
	"uint16", "uint32", "uint64",
};

static const char *const device_type_names[] = {
	"cpu", "cuda", "mkldnn", "opengl", "opencl", "ideep", "hip", "fpga", "maia",
	"xla", "vulkan", "metal", "xpu", "mps", "meta", "hpu", "ve", "lazy", "ipu",
	"mtia", "privateuseone",
};

#define N_DEVICE_TYPES (int)(sizeof(device_type_names) / sizeof(device_type_names[0]))

/* device_opt_'s three bytes in either optional's layout; false when
 * neither reads as a set device. std::optional's is tried first: where
 * both read, it is the newer torch's. */
static bool device_decode(const uint8_t *b, struct py_tensor_meta *m)
{
	if (b[4] == 1 && b[2] < N_DEVICE_TYPES) {
		m->device_type = b[2];
		m->device_index = (int8_t)b[3];
		return true;
	}
	if (b[2] == 1 && b[3] < N_DEVICE_TYPES) {
		m->device_type = b[3];
		m->device_index = (int8_t)b[4];
		return true;
	}
	return false;
}

int py_tensor_meta_find(const uint64_t *w, size_t n, size_t from, struct py_tensor_meta *m)
{
	/* the vtable and refcounts come first in every release */
	for (size_t k = from > 2 ? from : 2; k + 14 <= n; k++) {
		uint64_t ndim = w[k], numel = w[k + 12], product = 1;
		uint8_t b[8];

		if (ndim > 64 || numel >> 62 || w[k + 11] >> 62)
			continue;
		memcpy(b, &w[k + 13], sizeof(b));
		memset(m, 0, sizeof(*m));
		m->dtype = b[0] | b[1] << 8;
		if (m->dtype > 255 || !device_decode(b, m))
			continue;
		m->ndim = (int)ndim;
		m->at = k;
		if (ndim > SIZES_INLINE) {
			/* sizes behind a pointer: the caller reads and checks them */
			if (!w[k + 1] || w[k + 1] & 7)
				continue;
			m->sizes_at = w[k + 1];
			return (int)k;
		}
		for (uint64_t i = 0; i < ndim && product <= numel; i++) {
			m->sizes[i] = (int64_t)w[k + 1 + i];
			if (m->sizes[i] < 0 || (m->sizes[i] && product > UINT64_MAX / (uint64_t)m->sizes[i]))
				product = UINT64_MAX;
			else
				product *= (uint64_t)m->sizes[i];
		}
		if (product == numel)
			return (int)k;
	}
	return -ENOENT;
}

/* The TensorImpl's meta through impl, with sizes read where they are
 * out of line; -ENOENT when impl is not one. */
static int tensor_impl_meta(const struct py_target *t, uint64_t impl, struct py_tensor_meta *m)
{
	uint64_t w[TENSOR_IMPL_WORDS];
	int k;

	if (!impl || impl & 7 || py_read(t, impl, w, sizeof(w)) < 0)
		return -ENOENT;
	for (k = py_tensor_meta_find(w, TENSOR_IMPL_WORDS, 0, m); k >= 0;
	     k = py_tensor_meta_find(w, TENSOR_IMPL_WORDS, (size_t)k + 1, m)) {
		int64_t sizes[64];
		uint64_t product = 1;

		if (!m->sizes_at)
			return 0;
		if (py_read(t, m->sizes_at, sizes, sizeof(sizes[0]) * (size_t)m->ndim) < 0)
			continue;
		for (int i = 0; i < m->ndim && product != UINT64_MAX; i++)
			product = sizes[i] < 0 || (sizes[i] && product > UINT64_MAX / (uint64_t)sizes[i]) ?
					  UINT64_MAX : product * (uint64_t)sizes[i];
		if (product == w[k + 12]) {
			memcpy(m->sizes, sizes, sizeof(m->sizes));
			return 0;
		}
	}
	return -ENOENT;
}

/* "<Tensor float32 (32, 1, 28, 28) cpu>", with the type's own name
 * (Parameter, a subclass); "<Tensor object>" where no TensorImpl is
 * found (one being torn down, a layout not seen before). */
static int render_tensor(const struct py_target *t, uint64_t obj, struct py_local *v)
{
	uint64_t head = t->l.object_type + 8, cdata[2];
	struct py_tensor_meta m;
	char device[32];
	size_t used;
	int ret = py_read(t, obj + head, cdata, sizeof(cdata));

	if (ret < 0)
		return ret;
	ret = tensor_impl_meta(t, cdata[0], &m);
	if (ret < 0 && cdata[0] <= 1) {
		uint64_t impl = cdata[1];

		/* MaybeOwned: owned, the at::Tensor; borrowed, a pointer to it */
		if (cdata[0] == 0 || read_u64(t, cdata[1], &impl) == 0)
			ret = tensor_impl_meta(t, impl, &m);
	}
	if (ret < 0) {
		snprintf(v->value, sizeof(v->value), "<%s object>", v->type);
		return 0;
	}
	if (m.device_index >= 0 && m.device_type)
		snprintf(device, sizeof(device), "%s:%d", device_type_names[m.device_type], m.device_index);
	else
		snprintf(device, sizeof(device), "%s", device_type_names[m.device_type]);
	if (m.dtype < (int)(sizeof(scalar_type_names) / sizeof(scalar_type_names[0])))
		used = (size_t)snprintf(v->value, sizeof(v->value), "<%s %s ", v->type, scalar_type_names[m.dtype]);
	else
		used = (size_t)snprintf(v->value, sizeof(v->value), "<%s dtype#%d ", v->type, m.dtype);
	used = shape_render(m.sizes, m.ndim, v->value, sizeof(v->value), used);
	snprintf(v->value + used, sizeof(v->value) - used, " %s>", device);
	return 0;
}

int py_array_render(const struct py_target *t, uint64_t obj, struct py_local *v)
{
	/* only numpy's own type has this tp_name (a class's is its bare
	 * name), and its subclasses share its layout; the same for torch's
	 * C base of Tensor, named with an underscore before 2.0 */
	if (py_type_derives(t, obj, "numpy.ndarray"))
		return render_ndarray(t, obj, v);
	if (py_type_derives(t, obj, "torch._C.TensorBase") || py_type_derives(t, obj, "torch._C._TensorBase"))
		return render_tensor(t, obj, v);
	return -ENOENT;
}
