// The HLO verifier's per-opcode rules: an instruction's operand count, result kind and called
// computations, then the shape rule of its opcode, from a table (verifier.cpp walks the module).
#include "hlo/verifier_rules.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/slice_map.hpp"
#include "hlo/convolution.hpp"
#include "hlo/ir.hpp"
#include "hlo/window.hpp"
#include "support/format.hpp"

namespace jx::hlo::verifier {

[[noreturn]] void fail(const std::string& who, const std::string& what) {
  throw CompileError("HLO verifier: " + who + ": " + what);
}
[[noreturn]] void fail(const Instruction& i, const std::string& what) { fail(i.name, what); }

namespace {

using Ints = std::vector<std::int64_t>;

std::string ints_str(const Ints& v) { return "{" + detail::join(v, ",") + "}"; }

const Ints& ints_attr(const Instruction& i, const std::string& name) {
  if (!i.attrs.has(name)) fail(i, "missing attribute '" + name + "'");
  const auto* v = std::get_if<Ints>(&i.attrs.get(name));
  if (!v) fail(i, "attribute '" + name + "' must be a list of integers");
  return *v;
}
Ints optional_ints(const Instruction& i, const std::string& name) {
  return i.attrs.has(name) ? ints_attr(i, name) : Ints{};
}
std::int64_t int_attr(const Instruction& i, const std::string& name) {
  if (!i.attrs.has(name)) fail(i, "missing attribute '" + name + "'");
  const auto* v = std::get_if<std::int64_t>(&i.attrs.get(name));
  if (!v) fail(i, "attribute '" + name + "' must be an integer");
  return *v;
}

const HloShape& array_operand(const Instruction& i, std::size_t k) {
  const HloShape& s = i.operands[k]->shape;
  if (s.is_tuple) fail(i, "operand " + std::to_string(k) + " must be an array, got " + s.str());
  return s;
}

void expect_shape(const Instruction& i, DType dtype, const Shape& dims) {
  HloShape want = HloShape::array(dtype, dims);
  if (i.shape != want) fail(i, "result shape must be " + want.str() + ", got " + i.shape.str());
}

// Unique dimension numbers in [0, rank).
void check_dims(const Instruction& i, const Ints& dims, int rank, const std::string& what) {
  std::vector<bool> seen(static_cast<std::size_t>(rank), false);
  for (std::int64_t d : dims) {
    if (d < 0 || d >= rank || seen[d])
      fail(i, what + " " + ints_str(dims) + " must be unique dimensions in [0, " +
                  std::to_string(rank) + ")");
    seen[d] = true;
  }
}

// ---- per-opcode rules ----------------------------------------------------------------------

// "needs a floating type", "needs pred or an integer type", ...: the opcode table's dtypes.
std::string dtypes_str(DTypeSet s) {
  if (s == kFloating) return "a floating type";
  if (s == kInteger) return "an integer type";
  if (s == kIntegerOrBool) return "pred or an integer type";
  return "a numeric type";
}

void check_elementwise(const Instruction& i) {
  for (std::size_t k = 0; k < i.operands.size(); ++k) {
    const HloShape& s = array_operand(i, k);
    bool scalar_ok = i.opcode == Opcode::kClamp && k != 1 && s.dims.empty();
    if (s.dims != i.shape.dims && !scalar_ok)
      fail(i, "operand " + std::to_string(k) + " has shape " + s.str() +
                  ", the result's dimensions are " + i.shape.str());
  }
  DType out = i.shape.dtype;
  auto dtype_of_operand = [&](std::size_t k) { return i.operands[k]->shape.dtype; };
  auto same_dtype = [&](std::size_t from, DType want) {
    for (std::size_t k = from; k < i.operands.size(); ++k)
      if (dtype_of_operand(k) != want)
        fail(i, "operand " + std::to_string(k) + " has type " + i.operands[k]->shape.str() +
                    ", expected " + std::string(hlo_type_name(want)));
  };
  switch (i.opcode) {
    case Opcode::kConvert:
      return;
    case Opcode::kCompare: {
      if (out != bool_) fail(i, "compare must return pred, got " + i.shape.str());
      same_dtype(1, dtype_of_operand(0));
      const AttrValue* dir = i.attrs.has("direction") ? &i.attrs.get("direction") : nullptr;
      const auto* word = dir ? std::get_if<std::string>(dir) : nullptr;
      static const std::unordered_set<std::string> kDirections{"EQ", "NE", "LT", "LE", "GT", "GE"};
      if (!word || !kDirections.count(*word)) fail(i, "direction must be one of EQ NE LT LE GT GE");
      return;
    }
    case Opcode::kSelect:
      if (dtype_of_operand(0) != bool_) fail(i, "select's predicate must be pred");
      same_dtype(1, out);
      return;
    case Opcode::kIsFinite:
      if (out != bool_) fail(i, "is-finite must return pred, got " + i.shape.str());
      out = dtype_of_operand(0);
      break;
    default:
      same_dtype(0, out);
  }
  DTypeSet accepted = info(i.opcode).dtypes;
  if (!accepted.contains(out))
    fail(i, std::string(info(i.opcode).name) + " needs " + dtypes_str(accepted) + ", got " +
                i.shape.str());
}

void check_parameter(const Instruction& i) {
  if (i.parameter_number < 0) fail(i, "parameter number must be >= 0");
}

void check_constant(const Instruction& i) {
  if (!i.literal || !i.literal->valid() || i.literal->is_tracer())
    fail(i, "constant without a concrete literal");
  expect_shape(i, i.literal->dtype(), i.literal->shape());
}

void check_iota(const Instruction& i) {
  std::int64_t d = int_attr(i, "iota_dimension");
  if (d < 0 || d >= i.shape.rank())
    fail(i, "iota_dimension " + std::to_string(d) + " out of range for " + i.shape.str());
}

void check_broadcast(const Instruction& i) {
  const HloShape& in = array_operand(i, 0);
  const Ints& dims = ints_attr(i, "dimensions");
  if (static_cast<int>(dims.size()) != in.rank())
    fail(i, "dimensions " + ints_str(dims) + " must have one entry per operand dimension of " +
                in.str());
  check_dims(i, dims, i.shape.rank(), "dimensions");
  for (int k = 0; k < in.rank(); ++k)
    if (in.dims[k] != 1 && in.dims[k] != i.shape.dims[dims[k]])
      fail(i, "operand " + in.str() + " does not broadcast to " + i.shape.str() +
                  " along dimensions " + ints_str(dims));
  expect_shape(i, in.dtype, i.shape.dims);
}

void check_reshape(const Instruction& i) {
  const HloShape& in = array_operand(i, 0);
  if (in.size() != shape_size(i.shape.dims))
    fail(i, "cannot reshape " + in.str() + " to " + i.shape.str());
  expect_shape(i, in.dtype, i.shape.dims);
}

void check_transpose(const Instruction& i) {
  const HloShape& in = array_operand(i, 0);
  const Ints& perm = ints_attr(i, "dimensions");
  if (static_cast<int>(perm.size()) != in.rank())
    fail(i, "dimensions " + ints_str(perm) + " is not a permutation of " + in.str());
  check_dims(i, perm, in.rank(), "permutation");
  Shape out;
  for (std::int64_t p : perm) out.push_back(in.dims[p]);
  expect_shape(i, in.dtype, out);
}

void check_slice(const Instruction& i) {
  const HloShape& in = array_operand(i, 0);
  const Ints& s = ints_attr(i, "slice");
  if (s.size() != 3 * in.dims.size()) fail(i, "slice needs one [start:limit:stride] per dimension");
  Shape out;
  for (std::size_t d = 0; d < in.dims.size(); ++d) {
    std::int64_t start = s[3 * d], limit = s[3 * d + 1], stride = s[3 * d + 2];
    if (start < 0 || start > limit || limit > in.dims[d] || stride < 1)
      fail(i, "slice [" + std::to_string(start) + ":" + std::to_string(limit) + ":" +
                  std::to_string(stride) + "] is out of bounds for dimension " + std::to_string(d) +
                  " of " + in.str());
    out.push_back((limit - start + stride - 1) / stride);
  }
  expect_shape(i, in.dtype, out);
}

// Scalar integer start indices from operand `first` on, one per dimension of `rank`.
void check_indices(const Instruction& i, std::size_t first, int rank) {
  if (i.operands.size() != first + static_cast<std::size_t>(rank))
    fail(i, "expected " + std::to_string(first + rank) + " operands, got " +
                std::to_string(i.operands.size()));
  for (std::size_t k = first; k < i.operands.size(); ++k) {
    const HloShape& s = array_operand(i, k);
    if (!s.dims.empty() || !is_integral(s.dtype))
      fail(i, "start index " + std::to_string(k - first) + " must be an integer scalar, got " +
                  s.str());
  }
}

// The result's dims are the window sizes; dynamic_slice_sizes, when present, repeats them.
void check_dynamic_slice(const Instruction& i) {
  if (i.operands.empty()) fail(i, "dynamic-slice needs an operand");
  const HloShape& in = array_operand(i, 0);
  check_indices(i, 1, in.rank());
  const Shape& sizes = i.shape.dims;
  if (i.attrs.has("dynamic_slice_sizes") && ints_attr(i, "dynamic_slice_sizes") != sizes)
    fail(i, "dynamic_slice_sizes must be the result's dimensions " + ints_str(sizes));
  bool fits = sizes.size() == in.dims.size();
  for (std::size_t d = 0; fits && d < sizes.size(); ++d) fits = sizes[d] <= in.dims[d];
  if (!fits) fail(i, "a window of " + i.shape.str() + " does not fit in " + in.str());
  expect_shape(i, in.dtype, sizes);
}

void check_dynamic_update_slice(const Instruction& i) {
  if (i.operands.size() < 2) fail(i, "dynamic-update-slice needs an operand and an update");
  const HloShape& in = array_operand(i, 0);
  const HloShape& update = array_operand(i, 1);
  check_indices(i, 2, in.rank());
  bool fits = update.rank() == in.rank() && update.dtype == in.dtype;
  for (int d = 0; fits && d < in.rank(); ++d) fits = update.dims[d] <= in.dims[d];
  if (!fits) fail(i, "update " + update.str() + " does not fit in " + in.str());
  expect_shape(i, in.dtype, in.dims);
}

void check_concatenate(const Instruction& i) {
  if (i.operands.empty()) fail(i, "concatenate needs at least one operand");
  const Ints& dims = ints_attr(i, "dimensions");
  const HloShape& first = array_operand(i, 0);
  if (dims.size() != 1 || dims[0] < 0 || dims[0] >= first.rank())
    fail(i, "dimensions " + ints_str(dims) + " must name one dimension of " + first.str());
  Shape out = first.dims;
  out[dims[0]] = 0;
  for (std::size_t k = 0; k < i.operands.size(); ++k) {
    const HloShape& s = array_operand(i, k);
    bool ok = s.dtype == first.dtype && s.rank() == first.rank();
    for (int d = 0; ok && d < s.rank(); ++d) ok = d == dims[0] || s.dims[d] == first.dims[d];
    if (!ok) fail(i, "cannot concatenate " + s.str() + " with " + first.str());
    out[dims[0]] += s.dims[dims[0]];
  }
  expect_shape(i, first.dtype, out);
}

void check_pad(const Instruction& i) {
  const HloShape& in = array_operand(i, 0);
  const HloShape& value = array_operand(i, 1);
  if (!value.dims.empty() || value.dtype != in.dtype)
    fail(i, "padding value must be a " + std::string(hlo_type_name(in.dtype)) + " scalar");
  const Ints& p = ints_attr(i, "padding");
  if (p.size() != 3 * in.dims.size()) fail(i, "padding needs one lo_hi_interior per dimension");
  Shape out;
  for (std::size_t d = 0; d < in.dims.size(); ++d) {
    std::int64_t n = in.dims[d], interior = p[3 * d + 2];
    std::int64_t size = p[3 * d] + p[3 * d + 1] + n + std::max<std::int64_t>(n - 1, 0) * interior;
    if (interior < 0 || size < 0) fail(i, "bad padding for dimension " + std::to_string(d));
    out.push_back(size);
  }
  expect_shape(i, in.dtype, out);
}

// The dims of `in` left after removing `dims`.
Shape kept_dims(const HloShape& in, const Ints& dims) {
  Shape out;
  for (int d = 0; d < in.rank(); ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) out.push_back(in.dims[d]);
  return out;
}

// A to_apply computation mapping two scalars of `dtype` to one.
void check_combiner(const Instruction& i, DType dtype) {
  if (i.called.size() != 1)
    fail(i, std::string(info(i.opcode).name) + " needs one to_apply computation");
  const Computation* f = i.called[0];
  HloShape scalar = HloShape::array(dtype, {});
  const auto& ps = f->parameters();
  if (ps.size() != 2 || !ps[0] || !ps[1] || ps[0]->shape != scalar || ps[1]->shape != scalar ||
      !f->root() || f->root()->shape != scalar)
    fail(i, "to_apply %" + f->name() + " must map two " + scalar.str() + " to one");
}

// Gather's and scatter's indices: integers, the start vectors along their last dim.
const HloShape& check_index_operand(const Instruction& i, std::size_t vector_length) {
  const HloShape& idx = array_operand(i, 1);
  if (!is_integral(idx.dtype) || idx.rank() < 1 ||
      int_attr(i, "index_vector_dim") != idx.rank() - 1 ||
      idx.dims.back() != static_cast<std::int64_t>(vector_length))
    fail(i, "indices " + idx.str() + " must be integers with start vectors of " +
                std::to_string(vector_length) + " along their last dim (index_vector_dim)");
  return idx;
}

void check_gather(const Instruction& i) {
  const HloShape& in = array_operand(i, 0);
  SliceMap m{ints_attr(i, "offset_dims"), ints_attr(i, "collapsed_slice_dims"),
             ints_attr(i, "start_index_map"), optional_ints(i, "operand_batching_dims"),
             optional_ints(i, "start_indices_batching_dims")};
  const HloShape& idx = check_index_operand(i, m.start_index_map.size());
  const Ints& sizes = ints_attr(i, "slice_sizes");
  Ints walk = window_operand_dims(m, in.dims.size());
  if (sizes.size() != in.dims.size() || walk.size() != m.window_dims.size())
    fail(i, "slice_sizes " + ints_str(sizes) + " and offset_dims do not fit " + in.str());
  auto rank = static_cast<int>(m.window_dims.size()) + idx.rank() - 1;
  check_dims(i, m.window_dims, rank, "offset_dims");
  check_dims(i, m.start_index_map, in.rank(), "start_index_map");
  Shape out(static_cast<std::size_t>(rank));
  for (std::size_t j = 0; j < walk.size(); ++j) out[m.window_dims[j]] = sizes[walk[j]];
  std::size_t next = 0;
  for (std::int64_t d : batch_dims_of(m, out.size())) out[d] = idx.dims[next++];
  expect_shape(i, in.dtype, out);
}

void check_scatter(const Instruction& i) {
  const HloShape& in = array_operand(i, 0);
  const HloShape& updates = array_operand(i, 2);
  SliceMap m{ints_attr(i, "update_window_dims"), ints_attr(i, "inserted_window_dims"),
             ints_attr(i, "scatter_dims_to_operand_dims"), optional_ints(i, "input_batching_dims"),
             optional_ints(i, "scatter_indices_batching_dims")};
  const HloShape& idx = check_index_operand(i, m.start_index_map.size());
  if (updates.dtype != in.dtype ||
      window_operand_dims(m, in.dims.size()).size() != m.window_dims.size() ||
      updates.rank() != static_cast<int>(m.window_dims.size()) + idx.rank() - 1)
    fail(i, "updates " + updates.str() + " do not fit " + in.str());
  check_dims(i, m.window_dims, updates.rank(), "update_window_dims");
  check_dims(i, m.start_index_map, in.rank(), "scatter_dims_to_operand_dims");
  expect_shape(i, in.dtype, in.dims);
  check_combiner(i, in.dtype);
}

// reduce's and reduce-window's operands: an array, then its init value; and their to_apply.
const HloShape& check_folded_operands(const Instruction& i) {
  const HloShape& in = array_operand(i, 0);
  const HloShape& init = array_operand(i, 1);
  if (!init.dims.empty() || init.dtype != in.dtype)
    fail(i, "init value must be a " + std::string(hlo_type_name(in.dtype)) + " scalar");
  check_combiner(i, in.dtype);
  return in;
}

void check_reduce(const Instruction& i) {
  const HloShape& in = check_folded_operands(i);
  const Ints& dims = ints_attr(i, "dimensions");
  check_dims(i, dims, in.rank(), "dimensions");
  expect_shape(i, in.dtype, kept_dims(in, dims));
}

void check_reverse(const Instruction& i) {
  const HloShape& in = array_operand(i, 0);
  check_dims(i, ints_attr(i, "dimensions"), in.rank(), "dimensions");
  expect_shape(i, in.dtype, in.dims);
}

void check_reduce_window(const Instruction& i) {
  const HloShape& in = check_folded_operands(i);
  const Ints& attr = ints_attr(i, "window");
  if (attr.size() != kWindowFields * in.dims.size())
    fail(i, "window needs size, stride, padding and dilations for each dimension of " + in.str());
  Window window = window_from_attr(attr);
  for (const WindowDim& w : window)
    if (w.size < 1 || w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1)
      fail(i, "window sizes, strides and dilations must be at least 1");
  expect_shape(i, in.dtype, window_output_dims(in.dims, window));
}

void check_convolution(const Instruction& i) {
  const HloShape& lhs = array_operand(i, 0);
  const HloShape& rhs = array_operand(i, 1);
  if (lhs.dtype != rhs.dtype) fail(i, "operands differ in type: " + lhs.str() + ", " + rhs.str());
  if (lhs.rank() != rhs.rank()) fail(i, "lhs and rhs differ in rank");
  ConvGeometry g = convolution_geometry(i);
  auto dim = [](const HloShape& s, const Ints& spec, std::size_t k) {
    return s.dims[static_cast<std::size_t>(spec[k])];
  };
  std::int64_t groups = std::max(g.feature_group_count, g.batch_group_count);
  if (g.feature_group_count > 1 && g.batch_group_count > 1)
    fail(i, "at most one of feature_group_count and batch_group_count may be above 1");
  if (dim(lhs, g.lhs_spec, 1) != dim(rhs, g.rhs_spec, 1) * g.feature_group_count)
    fail(i, "lhs features must be the kernel's input features times feature_group_count");
  if (dim(lhs, g.lhs_spec, 0) % g.batch_group_count || dim(rhs, g.rhs_spec, 0) % groups)
    fail(i, "the groups must divide the lhs batch and the kernel's output features");
  expect_shape(i, lhs.dtype, conv_output_shape(g, lhs.dims, rhs.dims));
}

void check_arg_reduce(const Instruction& i) {
  const HloShape& in = array_operand(i, 0);
  const Ints& dims = ints_attr(i, "dimensions");
  if (dims.size() != 1) fail(i, "dimensions must name one axis");
  check_dims(i, dims, in.rank(), "dimensions");
  if (!is_integral(i.shape.dtype)) fail(i, "the result must have an integer type");
  expect_shape(i, i.shape.dtype, kept_dims(in, dims));
}

void check_dot(const Instruction& i) {
  const HloShape& lhs = array_operand(i, 0);
  const HloShape& rhs = array_operand(i, 1);
  if (lhs.dtype != rhs.dtype) fail(i, "operands differ in type: " + lhs.str() + ", " + rhs.str());
  Ints lb = optional_ints(i, "lhs_batch_dims"), rb = optional_ints(i, "rhs_batch_dims");
  Ints lc = optional_ints(i, "lhs_contracting_dims"), rc = optional_ints(i, "rhs_contracting_dims");
  if (lb.size() != rb.size() || lc.size() != rc.size())
    fail(i, "lhs and rhs need as many batch and as many contracting dimensions");
  Ints lhs_all = lb, rhs_all = rb;
  lhs_all.insert(lhs_all.end(), lc.begin(), lc.end());
  rhs_all.insert(rhs_all.end(), rc.begin(), rc.end());
  check_dims(i, lhs_all, lhs.rank(), "lhs batch and contracting dimensions");
  check_dims(i, rhs_all, rhs.rank(), "rhs batch and contracting dimensions");
  Shape out;
  for (std::size_t k = 0; k < lhs_all.size(); ++k) {
    if (lhs.dims[lhs_all[k]] != rhs.dims[rhs_all[k]])
      fail(i, "dimension sizes differ: " + lhs.str() + " dim " + std::to_string(lhs_all[k]) + ", " +
                  rhs.str() + " dim " + std::to_string(rhs_all[k]));
    if (k < lb.size()) out.push_back(lhs.dims[lb[k]]);
  }
  for (std::int64_t d : kept_dims(lhs, lhs_all)) out.push_back(d);
  for (std::int64_t d : kept_dims(rhs, rhs_all)) out.push_back(d);
  expect_shape(i, i.shape.dtype, out);
}

void check_host_callback(const Instruction& i) {
  int_attr(i, "callback");
  if (i.shape != HloShape::tuple({})) fail(i, "result shape must be (), got " + i.shape.str());
}

void check_sort(const Instruction& i) {
  if (i.operands.empty()) fail(i, "sort needs at least one operand");
  const HloShape& first = array_operand(i, 0);
  std::vector<HloShape> elements;
  for (std::size_t k = 0; k < i.operands.size(); ++k) {
    const HloShape& s = array_operand(i, k);
    if (s.dims != first.dims) fail(i, "cannot sort " + s.str() + " with " + first.str());
    elements.push_back(s);
  }
  const Ints& dims = ints_attr(i, "dimensions");
  if (dims.size() != 1) fail(i, "dimensions " + ints_str(dims) + " must name one dimension");
  check_dims(i, dims, first.rank(), "dimensions");
  std::int64_t keys = int_attr(i, "num_keys");
  if (keys < 1 || keys > static_cast<std::int64_t>(i.operands.size()))
    fail(i, "num_keys=" + std::to_string(keys) + " must be between 1 and the operand count");
  const auto* stable =
      i.attrs.has("is_stable") ? std::get_if<std::string>(&i.attrs.get("is_stable")) : nullptr;
  if (!stable || (*stable != "true" && *stable != "false"))
    fail(i, "is_stable must be true or false");
  HloShape want = HloShape::tuple(std::move(elements));
  if (i.shape != want) fail(i, "result shape must be " + want.str() + ", got " + i.shape.str());
}

void check_tuple(const Instruction& i) {
  std::vector<HloShape> elements;
  for (const Instruction* op : i.operands) elements.push_back(op->shape);
  HloShape want = HloShape::tuple(std::move(elements));
  if (i.shape != want) fail(i, "result shape must be " + want.str() + ", got " + i.shape.str());
}

void check_get_tuple_element(const Instruction& i) {
  const HloShape& t = i.operands[0]->shape;
  if (!t.is_tuple) fail(i, "operand must be a tuple, got " + t.str());
  std::int64_t k = int_attr(i, "index");
  if (k < 0 || k >= static_cast<std::int64_t>(t.tuple_shapes.size()))
    fail(i, "index " + std::to_string(k) + " out of range for " + t.str());
  if (i.shape != t.tuple_shapes[k])
    fail(i, "result shape must be " + t.tuple_shapes[k].str() + ", got " + i.shape.str());
}

// The parameters of `f`, called by `i`, take i's operands from `first` on.
void check_parameters(const Instruction& i, const Computation& f, std::size_t first) {
  const auto& ps = f.parameters();
  std::size_t n = i.operands.size() - first;
  if (ps.size() != n)
    fail(i, "%" + f.name() + " takes " + std::to_string(ps.size()) + " parameter(s) for " +
                std::to_string(n) + " operand(s)");
  for (std::size_t k = 0; k < n; ++k)
    if (!ps[k] || ps[k]->shape != i.operands[first + k]->shape)
      fail(i, "parameter " + std::to_string(k) + " of %" + f.name() + " must be " +
                  i.operands[first + k]->shape.str());
}

void check_fusion(const Instruction& i) {
  if (!i.attrs.has("kind") || !std::holds_alternative<std::string>(i.attrs.get("kind")))
    fail(i, "fusion needs kind=kLoop|kInput|kOutput");
  const std::string& kind = i.attrs.get_string("kind");
  if (kind != "kLoop" && kind != "kInput" && kind != "kOutput")
    fail(i, "unknown fusion kind " + kind);
  if (i.called.size() != 1) fail(i, "fusion needs one called computation");
  const Computation* f = i.called[0];
  check_parameters(i, *f, 0);
  if (!f->root() || f->root()->shape != i.shape)
    fail(i, "the root of %" + f->name() + " must be " + i.shape.str());
}

// A while's body and a conditional's branches return their results as one tuple instruction.
void check_tuple_root(const Instruction& i, const Computation& f) {
  const Instruction* root = f.root();
  if (!root || root->opcode != Opcode::kTuple || root->shape != i.shape)
    fail(i, "the root of %" + f.name() + " must be a tuple " + i.shape.str() + ", got " +
                (root ? root->shape.str() + " " + std::string(info(root->opcode).name) : "none"));
}

void check_while(const Instruction& i) {
  if (i.called.size() != 2) fail(i, "while needs a condition and a body");
  std::vector<HloShape> carry;
  for (std::size_t k = 0; k < i.operands.size(); ++k) carry.push_back(array_operand(i, k));
  HloShape want = HloShape::tuple(std::move(carry));
  if (i.shape != want) fail(i, "result shape must be " + want.str() + ", got " + i.shape.str());
  const Computation& condition = *i.called[0];
  check_parameters(i, condition, 0);
  HloShape pred = HloShape::array(bool_, {});
  if (!condition.root() || condition.root()->shape != pred)
    fail(i, "the condition %" + condition.name() + " must return pred[], got " +
                (condition.root() ? condition.root()->shape.str() : "none"));
  check_parameters(i, *i.called[1], 0);
  check_tuple_root(i, *i.called[1]);
}

void check_conditional(const Instruction& i) {
  if (i.operands.empty()) fail(i, "conditional needs a branch index operand");
  const HloShape& index = array_operand(i, 0);
  if (index != HloShape::array(int32, {}))
    fail(i, "the branch index must be s32[], got " + index.str());
  for (std::size_t k = 1; k < i.operands.size(); ++k) array_operand(i, k);
  if (i.called.empty()) fail(i, "conditional needs at least one branch");
  if (!i.shape.is_tuple) fail(i, "result must be a tuple, got " + i.shape.str());
  for (const Computation* branch : i.called) {
    check_parameters(i, *branch, 1);
    check_tuple_root(i, *branch);
  }
}

using Rule = void (*)(const Instruction&);

// Opcode → rule; elementwise opcodes share one rule through their trait.
const std::unordered_map<Opcode, Rule>& rules() {
  static const std::unordered_map<Opcode, Rule> table{
      {Opcode::kParameter, check_parameter},
      {Opcode::kConstant, check_constant},
      {Opcode::kIota, check_iota},
      {Opcode::kBroadcast, check_broadcast},
      {Opcode::kReshape, check_reshape},
      {Opcode::kTranspose, check_transpose},
      {Opcode::kSlice, check_slice},
      {Opcode::kDynamicSlice, check_dynamic_slice},
      {Opcode::kDynamicUpdateSlice, check_dynamic_update_slice},
      {Opcode::kConcatenate, check_concatenate},
      {Opcode::kPad, check_pad},
      {Opcode::kGather, check_gather},
      {Opcode::kScatter, check_scatter},
      {Opcode::kReduce, check_reduce},
      {Opcode::kReverse, check_reverse},
      {Opcode::kReduceWindow, check_reduce_window},
      {Opcode::kArgMax, check_arg_reduce},
      {Opcode::kArgMin, check_arg_reduce},
      {Opcode::kDot, check_dot},
      {Opcode::kConvolution, check_convolution},
      {Opcode::kSort, check_sort},
      {Opcode::kHostCallback, check_host_callback},
      {Opcode::kTuple, check_tuple},
      {Opcode::kOptimizationBarrier, check_tuple},
      {Opcode::kGetTupleElement, check_get_tuple_element},
      {Opcode::kFusion, check_fusion},
      {Opcode::kWhile, check_while},
      {Opcode::kConditional, check_conditional},
  };
  return table;
}

}  // namespace

void check_instruction(const Instruction& i, const std::unordered_set<const Computation*>& comps) {
  int arity = info(i.opcode).arity;
  if (arity >= 0 && static_cast<int>(i.operands.size()) != arity)
    fail(i, std::string(info(i.opcode).name) + " takes " + std::to_string(arity) +
                " operand(s), got " + std::to_string(i.operands.size()));
  if (i.shape.is_tuple && !has_trait(i.opcode, kTupleResult)) fail(i, "result must be an array");
  for (std::int64_t d : i.shape.dims)
    if (d < 0) fail(i, "dimension sizes must be >= 0, got " + i.shape.str());
  if (!i.called.empty() && !has_trait(i.opcode, kCallsComputations))
    fail(i, std::string(info(i.opcode).name) + " calls no computation");
  for (const Computation* c : i.called) {
    if (!c) fail(i, "a called computation is missing");
    if (!comps.count(c)) fail(i, "calls a computation that is not in the module");
  }
  if (has_trait(i.opcode, kElementwise)) return check_elementwise(i);
  auto it = rules().find(i.opcode);
  if (it != rules().end()) it->second(i);
}

}  // namespace jx::hlo::verifier
