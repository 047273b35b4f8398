// The HLO evaluator's layout, reduction and contraction opcodes. Layout ops copy raw elements
// through an index map, so one loop serves every dtype.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "core/conv_map.hpp"
#include "core/element_convert.hpp"
#include "core/slice_map.hpp"
#include "core/sort_rows.hpp"
#include "hlo/convolution.hpp"
#include "hlo/evaluator_internal.hpp"
#include "hlo/window.hpp"

namespace jx::hlo::eval {
namespace {

using Ints = std::vector<std::int64_t>;

Ints ints_or_empty(const Instruction& inst, const std::string& name) {
  return inst.attrs.has(name) ? inst.attrs.get_ints(name) : Ints{};
}

const char* bytes(const Array& x) {
  return static_cast<const char*>(concrete_buffer(x, "the HLO evaluator").data());
}

// out[index] = in[map(index)] (a flat element offset), or *fill where map gives -1.
template <class Map>
Array gather(const HloShape& shape, const Array& in, Map map, const Array* fill = nullptr) {
  Array out = fresh(shape);
  std::size_t w = itemsize(shape.dtype);
  const char* src = bytes(in);
  const char* pad = fill ? bytes(*fill) : nullptr;
  char* dst = static_cast<char*>(out.impl()->buffer->data());
  for_each_index(shape.dims, [&](const Index& index, std::int64_t flat) {
    std::int64_t k = map(index);
    std::memcpy(dst + flat * w, k < 0 ? pad : src + k * w, w);
  });
  return out;
}

// A scalar start index operand, as int64.
std::int64_t scalar_index(const Array& x) { return x.item<std::int64_t>(); }

// Dynamic-slice starts are clamped so the window stays inside the operand (XLA's rule).
Ints clamped_starts(std::span<const Array> in, std::size_t first, const Shape& dims,
                    const Shape& window) {
  Ints starts;
  for (std::size_t d = 0; d < dims.size(); ++d)
    starts.push_back(std::clamp<std::int64_t>(scalar_index(in[first + d]), 0, dims[d] - window[d]));
  return starts;
}

// The first index of the extreme along `axis`; NaN beats every number (jnp.argmax's rule).
template <bool kMax>
Array arg_reduce(const Instruction& inst, std::span<const Array> in) {
  const Shape& dims = in[0].shape();
  std::int64_t axis = inst.attrs.get_ints("dimensions").at(0);
  Index st = strides(dims);
  Array out = fresh(inst.shape);
  dispatch(in[0].dtype(), [&]<class T>() {
    const T* x = data<T>(in[0]);
    dispatch(inst.shape.dtype, [&]<class O>() {
      O* o = mutable_data<O>(out);
      for_each_index(inst.shape.dims, [&](const Index& index, std::int64_t flat) {
        std::int64_t base = 0;
        for (std::size_t d = 0, k = 0; d < dims.size(); ++d)
          if (static_cast<std::int64_t>(d) != axis) base += index[k++] * st[d];
        std::int64_t best = 0;
        for (std::int64_t j = 1; j < dims[axis]; ++j) {
          T v = x[base + j * st[axis]], b = x[base + best * st[axis]];
          if constexpr (std::is_floating_point_v<T>) {
            if (std::isnan(b)) break;
            if (std::isnan(v)) {
              best = j;
              break;
            }
          }
          if (kMax ? v > b : v < b) best = j;
        }
        o[flat] = static_cast<O>(best);
      });
    });
  });
  return out;
}

}  // namespace

Array iota(const Instruction& inst, std::span<const Array>) {
  Array out = fresh(inst.shape);
  std::int64_t dim = inst.attrs.get_int("iota_dimension");
  dispatch(inst.shape.dtype, [&]<class T>() {
    T* o = mutable_data<T>(out);
    for_each_index(inst.shape.dims, [&](const Index& index, std::int64_t flat) {
      o[flat] = static_cast<T>(index[dim]);
    });
  });
  return out;
}

Array broadcast(const Instruction& inst, std::span<const Array> in) {
  const Ints& dims = inst.attrs.get_ints("dimensions");
  const Shape& in_dims = in[0].shape();
  Index st = strides(in_dims);
  return gather(inst.shape, in[0], [&](const Index& index) {
    std::int64_t k = 0;
    for (std::size_t d = 0; d < dims.size(); ++d)
      if (in_dims[d] != 1) k += index[dims[d]] * st[d];
    return k;
  });
}

Array reshape(const Instruction& inst, std::span<const Array> in) {
  return with_aval(in[0], ShapedArray{inst.shape.dims, inst.shape.dtype, false});
}

Array transpose(const Instruction& inst, std::span<const Array> in) {
  const Ints& perm = inst.attrs.get_ints("dimensions");
  Index st = strides(in[0].shape());
  return gather(inst.shape, in[0], [&](const Index& index) {
    std::int64_t k = 0;
    for (std::size_t d = 0; d < perm.size(); ++d) k += index[d] * st[perm[d]];
    return k;
  });
}

Array slice(const Instruction& inst, std::span<const Array> in) {
  const Ints& s = inst.attrs.get_ints("slice");
  Index st = strides(in[0].shape());
  return gather(inst.shape, in[0], [&](const Index& index) {
    std::int64_t k = 0;
    for (std::size_t d = 0; d < index.size(); ++d)
      k += (s[3 * d] + index[d] * s[3 * d + 2]) * st[d];
    return k;
  });
}

Array dynamic_slice(const Instruction& inst, std::span<const Array> in) {
  Ints starts = clamped_starts(in, 1, in[0].shape(), inst.shape.dims);
  Index st = strides(in[0].shape());
  return gather(inst.shape, in[0], [&](const Index& index) {
    std::int64_t k = 0;
    for (std::size_t d = 0; d < index.size(); ++d) k += (starts[d] + index[d]) * st[d];
    return k;
  });
}

Array dynamic_update_slice(const Instruction& inst, std::span<const Array> in) {
  const Shape& dims = in[0].shape();
  Ints starts = clamped_starts(in, 2, dims, in[1].shape());
  Array out = fresh(inst.shape);
  std::size_t w = itemsize(inst.shape.dtype);
  char* dst = static_cast<char*>(out.impl()->buffer->data());
  std::memcpy(dst, bytes(in[0]), static_cast<std::size_t>(inst.shape.size()) * w);
  Index st = strides(dims);
  const char* src = bytes(in[1]);
  for_each_index(in[1].shape(), [&](const Index& index, std::int64_t flat) {
    std::int64_t k = 0;
    for (std::size_t d = 0; d < index.size(); ++d) k += (starts[d] + index[d]) * st[d];
    std::memcpy(dst + k * w, src + flat * w, w);
  });
  return out;
}

Array concatenate(const Instruction& inst, std::span<const Array> in) {
  std::int64_t dim = inst.attrs.get_ints("dimensions").at(0);
  Array out = fresh(inst.shape);
  std::size_t w = itemsize(inst.shape.dtype);
  char* dst = static_cast<char*>(out.impl()->buffer->data());
  Index st = strides(inst.shape.dims);
  std::int64_t base = 0;  // where this operand starts along `dim`
  for (const Array& x : in) {
    const char* src = bytes(x);
    for_each_index(x.shape(), [&](const Index& index, std::int64_t flat) {
      std::int64_t k = base * st[dim];
      for (std::size_t d = 0; d < index.size(); ++d) k += index[d] * st[d];
      std::memcpy(dst + k * w, src + flat * w, w);
    });
    base += x.shape()[dim];
  }
  return out;
}

Array pad(const Instruction& inst, std::span<const Array> in) {
  const Ints& p = inst.attrs.get_ints("padding");
  const Shape& dims = in[0].shape();
  Index st = strides(dims);
  return gather(
      inst.shape, in[0],
      [&](const Index& index) -> std::int64_t {
        std::int64_t k = 0;
        for (std::size_t d = 0; d < index.size(); ++d) {
          std::int64_t o = index[d] - p[3 * d], step = p[3 * d + 2] + 1;
          if (o < 0 || o % step || o / step >= dims[d]) return -1;
          k += o / step * st[d];
        }
        return k;
      },
      &in[1]);
}

// Folds each output element's inputs in row-major order with the to_apply computation.
SliceMap gather_map(const Instruction& inst) {
  return {inst.attrs.get_ints("offset_dims"), inst.attrs.get_ints("collapsed_slice_dims"),
          inst.attrs.get_ints("start_index_map"), inst.attrs.get_ints("operand_batching_dims"),
          inst.attrs.get_ints("start_indices_batching_dims")};
}
SliceMap scatter_map(const Instruction& inst) {
  return {inst.attrs.get_ints("update_window_dims"), inst.attrs.get_ints("inserted_window_dims"),
          inst.attrs.get_ints("scatter_dims_to_operand_dims"),
          inst.attrs.get_ints("input_batching_dims"),
          inst.attrs.get_ints("scatter_indices_batching_dims")};
}

// Start vectors clamped into the operand, as XLA's gather clamps them.
Array gather_slices(const Instruction& inst, std::span<const Array> in) {
  Array out = fresh(inst.shape);
  std::size_t w = itemsize(inst.shape.dtype);
  char* dst = static_cast<char*>(out.impl()->buffer->data());
  const char* src = bytes(in[0]);
  for_each_slice_element(gather_map(inst), inst.shape.dims, in[0].shape(),
                         inst.attrs.get_ints("slice_sizes"), in[1].shape(), index_values(in[1]),
                         [&](std::int64_t k, std::int64_t at, bool) {
                           std::memcpy(dst + k * w, src + at * w, w);
                         });
  return out;
}

// Updates combine through to_apply in order; windows out of bounds are dropped, as XLA's.
Array scatter(const Instruction& inst, std::span<const Array> in) {
  Array out = fresh(inst.shape);
  std::size_t w = itemsize(inst.shape.dtype);
  char* dst = static_cast<char*>(out.impl()->buffer->data());
  std::memcpy(dst, bytes(in[0]), static_cast<std::size_t>(inst.shape.size()) * w);
  const char* src = bytes(in[2]);
  SliceMap m = scatter_map(inst);
  ShapedArray scalar{{}, inst.shape.dtype, false};
  for_each_slice_element(
      m, in[2].shape(), in[0].shape(), scatter_window(m, in[0].shape(), in[2].shape()),
      in[1].shape(), index_values(in[1]), [&](std::int64_t k, std::int64_t at, bool in_bounds) {
        if (!in_bounds) return;
        Array a = make_array(scalar), b = make_array(scalar);
        std::memcpy(a.impl()->buffer->data(), dst + at * w, w);
        std::memcpy(b.impl()->buffer->data(), src + k * w, w);
        Array args[] = {a, b};
        std::memcpy(dst + at * w, bytes(evaluate(*inst.called.at(0), args)), w);
      });
  return out;
}

Array reduce(const Instruction& inst, std::span<const Array> in) {
  const Ints& rdims = inst.attrs.get_ints("dimensions");
  const Computation& combiner = *inst.called.at(0);
  const Shape& dims = in[0].shape();
  std::vector<bool> reduced(dims.size(), false);
  for (std::int64_t d : rdims) reduced[d] = true;
  Index out_st = strides(inst.shape.dims);
  std::vector<Array> acc(static_cast<std::size_t>(inst.shape.size()), in[1]);
  ShapedArray scalar{{}, inst.shape.dtype, false};
  std::size_t w = itemsize(inst.shape.dtype);
  const char* src = bytes(in[0]);
  for_each_index(dims, [&](const Index& index, std::int64_t flat) {
    std::int64_t k = 0;
    for (std::size_t d = 0, j = 0; d < dims.size(); ++d)
      if (!reduced[d]) k += index[d] * out_st[j++];
    Array x = make_array(scalar);
    std::memcpy(x.impl()->buffer->data(), src + flat * w, w);
    Array args[] = {acc[k], x};
    acc[k] = evaluate(combiner, args);
  });
  Array out = fresh(inst.shape);
  char* dst = static_cast<char*>(out.impl()->buffer->data());
  for (std::size_t k = 0; k < acc.size(); ++k) std::memcpy(dst + k * w, bytes(acc[k]), w);
  return out;
}

Array reverse(const Instruction& inst, std::span<const Array> in) {
  const Shape& dims = in[0].shape();
  std::vector<bool> flipped(dims.size(), false);
  for (std::int64_t d : inst.attrs.get_ints("dimensions")) flipped[d] = true;
  Index st = strides(dims);
  return gather(inst.shape, in[0], [&](const Index& index) {
    std::int64_t k = 0;
    for (std::size_t d = 0; d < index.size(); ++d)
      k += (flipped[d] ? dims[d] - 1 - index[d] : index[d]) * st[d];
    return k;
  });
}

// Each output element folds, with the to_apply computation, the operand elements its window
// covers (in row-major window order) into init; positions in the padding or between dilated
// elements are skipped, as XLA's evaluator skips them.
Array reduce_window(const Instruction& inst, std::span<const Array> in) {
  Window window = window_of(inst);
  const Computation& combiner = *inst.called.at(0);
  ShapedArray scalar{{}, inst.shape.dtype, false};
  auto w = static_cast<std::int64_t>(itemsize(inst.shape.dtype));
  const char* src = bytes(in[0]);
  Array out = fresh(inst.shape);
  char* dst = static_cast<char*>(out.impl()->buffer->data());
  for_each_index(inst.shape.dims, [&](const Index& out_index, std::int64_t flat) {
    Array acc = in[1];
    for_each_window_tap(window, in[0].shape(), out_index, [&](std::int64_t k) {
      if (k < 0) return;
      Array x = make_array(scalar);
      std::memcpy(x.impl()->buffer->data(), src + k * w, static_cast<std::size_t>(w));
      Array args[] = {acc, x};
      acc = evaluate(combiner, args);
    });
    std::memcpy(dst + flat * w, bytes(acc), static_cast<std::size_t>(w));
  });
  return out;
}

Array arg_max(const Instruction& inst, std::span<const Array> in) {
  return arg_reduce<true>(inst, in);
}
Array arg_min(const Instruction& inst, std::span<const Array> in) {
  return arg_reduce<false>(inst, in);
}

// out[batch, lhs free, rhs free] = Σ over contracting dims of lhs · rhs, in the result type.
Array dot(const Instruction& inst, std::span<const Array> in) {
  const Shape &ld = in[0].shape(), &rd = in[1].shape();
  Ints lb = ints_or_empty(inst, "lhs_batch_dims"), rb = ints_or_empty(inst, "rhs_batch_dims");
  Ints lc = ints_or_empty(inst, "lhs_contracting_dims");
  Ints rc = ints_or_empty(inst, "rhs_contracting_dims");
  auto free_dims = [](const Shape& dims, const Ints& a, const Ints& b) {
    Ints out;
    for (std::int64_t d = 0; d < static_cast<std::int64_t>(dims.size()); ++d)
      if (std::find(a.begin(), a.end(), d) == a.end() &&
          std::find(b.begin(), b.end(), d) == b.end())
        out.push_back(d);
    return out;
  };
  Ints lf = free_dims(ld, lb, lc), rf = free_dims(rd, rb, rc);
  Index ls = strides(ld), rs = strides(rd);
  Shape csizes;
  for (std::int64_t d : lc) csizes.push_back(ld[d]);
  Array out = fresh(inst.shape);
  dispatch(in[0].dtype(), [&]<class T>() {
    dispatch(inst.shape.dtype, [&]<class O>() {
      const T *x = data<T>(in[0]), *y = data<T>(in[1]);
      O* o = mutable_data<O>(out);
      for_each_index(inst.shape.dims, [&](const Index& index, std::int64_t flat) {
        std::int64_t l0 = 0, r0 = 0;
        std::size_t k = 0;
        for (std::size_t b = 0; b < lb.size(); ++b, ++k)
          l0 += index[k] * ls[lb[b]], r0 += index[k] * rs[rb[b]];
        for (std::int64_t d : lf) l0 += index[k++] * ls[d];
        for (std::int64_t d : rf) r0 += index[k++] * rs[d];
        O acc{};
        auto step = [&](const Index& c, std::int64_t) {
          std::int64_t l = l0, r = r0;
          for (std::size_t j = 0; j < c.size(); ++j) l += c[j] * ls[lc[j]], r += c[j] * rs[rc[j]];
          acc = mul_add(acc, static_cast<O>(x[l]), static_cast<O>(y[r]));
        };
        for_each_index(csizes, step);  // once when nothing contracts
        o[flat] = acc;
      });
    });
  });
  return out;
}

// core/conv_map.hpp's sums, in the result type (the operands have it).
Array convolution(const Instruction& inst, std::span<const Array> in) {
  ConvGeometry g = convolution_geometry(inst);
  Array out = fresh(inst.shape);
  dispatch(inst.shape.dtype, [&]<class T>() {
    convolve<T, T>(g, in[0].shape(), data<T>(in[0]), in[1].shape(), data<T>(in[1]),
                   inst.shape.dims, mutable_data<T>(out));
  });
  return out;
}

// An array-rooted fusion is its computation run on the operands.
Array fusion(const Instruction& inst, std::span<const Array> in) {
  return evaluate(*inst.called.at(0), in);
}

std::vector<Array> sort(const Instruction& inst, std::span<const Array> in) {
  std::vector<Array> out;
  std::vector<DType> dtypes;
  std::vector<const void*> src;
  std::vector<void*> dst;
  for (std::size_t k = 0; k < in.size(); ++k) {
    out.push_back(fresh(inst.shape.tuple_shapes.at(k)));
    dtypes.push_back(in[k].dtype());
    src.push_back(bytes(in[k]));
    dst.push_back(out.back().impl()->buffer->data());
  }
  sort_rows(in[0].shape(), inst.attrs.get_ints("dimensions").at(0),
            static_cast<std::size_t>(inst.attrs.get_int("num_keys")), dtypes, src, dst);
  return out;
}

std::vector<Array> while_loop(const Instruction& inst, std::span<const Array> in) {
  const Computation& condition = *inst.called.at(0);
  const Computation& body = *inst.called.at(1);
  std::vector<Array> carry(in.begin(), in.end());
  while (data<bool>(evaluate(condition, carry))[0]) carry = evaluate_outputs(body, carry);
  return carry;
}

// XLA's rule: an index out of range runs the last branch.
std::vector<Array> conditional(const Instruction& inst, std::span<const Array> in) {
  auto branches = static_cast<std::int64_t>(inst.called.size());
  std::int64_t k = data<std::int32_t>(in[0])[0];
  if (k < 0 || k >= branches) k = branches - 1;
  return evaluate_outputs(*inst.called.at(static_cast<std::size_t>(k)), in.subspan(1));
}

}  // namespace jx::hlo::eval
