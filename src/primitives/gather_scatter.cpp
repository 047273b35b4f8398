#include "primitives/gather_scatter.hpp"

#include <algorithm>
#include <set>

namespace jx::gs {

using layout::fail;
using layout::tup;

namespace {

Ints field(const Param& record, const char* name) { return record.field(name).as_ints(); }

}  // namespace

Param gather_dnums_param(const lax::GatherDimensionNumbers& d) {
  return Param::record(
      "GatherDimensionNumbers",
      {{"offset_dims", Param::ints(d.offset_dims)},
       {"collapsed_slice_dims", Param::ints(d.collapsed_slice_dims)},
       {"start_index_map", Param::ints(d.start_index_map)},
       {"operand_batching_dims", Param::ints(d.operand_batching_dims)},
       {"start_indices_batching_dims", Param::ints(d.start_indices_batching_dims)}});
}

Param scatter_dnums_param(const lax::ScatterDimensionNumbers& d) {
  return Param::record(
      "ScatterDimensionNumbers",
      {{"update_window_dims", Param::ints(d.update_window_dims)},
       {"inserted_window_dims", Param::ints(d.inserted_window_dims)},
       {"scatter_dims_to_operand_dims", Param::ints(d.scatter_dims_to_operand_dims)},
       {"operand_batching_dims", Param::ints(d.operand_batching_dims)},
       {"scatter_indices_batching_dims", Param::ints(d.scatter_indices_batching_dims)}});
}

lax::GatherDimensionNumbers gather_dnums(const Params& params) {
  const Param& r = params.get("dimension_numbers");
  if (r.kind() != Param::Kind::kRecord || r.record_type() != "GatherDimensionNumbers")
    fail<TypeError>("gather dimension_numbers must be a GatherDimensionNumbers, got ", r.str());
  return {field(r, "offset_dims"), field(r, "collapsed_slice_dims"), field(r, "start_index_map"),
          field(r, "operand_batching_dims"), field(r, "start_indices_batching_dims")};
}

lax::ScatterDimensionNumbers scatter_dnums(const Params& params) {
  const Param& r = params.get("dimension_numbers");
  if (r.kind() != Param::Kind::kRecord || r.record_type() != "ScatterDimensionNumbers")
    fail<TypeError>("scatter dimension_numbers must be a ScatterDimensionNumbers, got ", r.str());
  return {field(r, "update_window_dims"), field(r, "inserted_window_dims"),
          field(r, "scatter_dims_to_operand_dims"), field(r, "operand_batching_dims"),
          field(r, "scatter_indices_batching_dims")};
}

SliceMap slice_map(const lax::GatherDimensionNumbers& d) {
  return {d.offset_dims, d.collapsed_slice_dims, d.start_index_map, d.operand_batching_dims,
          d.start_indices_batching_dims};
}
SliceMap slice_map(const lax::ScatterDimensionNumbers& d) {
  return {d.update_window_dims, d.inserted_window_dims, d.scatter_dims_to_operand_dims,
          d.operand_batching_dims, d.scatter_indices_batching_dims};
}

namespace {
constexpr std::pair<Mode, const char*> kModeNames[] = {
    {Mode::kClip, "GatherScatterMode.CLIP"},
    {Mode::kFillOrDrop, "GatherScatterMode.FILL_OR_DROP"},
    {Mode::kPromiseInBounds, "GatherScatterMode.PROMISE_IN_BOUNDS"},
};
}  // namespace

Param mode_param(Mode mode) {
  for (auto [m, name] : kModeNames)
    if (m == mode) return Param::name(name);
  return Param();
}

Mode mode_of(const Params& params) {
  const Param& p = params.get("mode");
  if (p.kind() == Param::Kind::kName)
    for (auto [m, name] : kModeNames)
      if (p.as_name() == name) return m;
  fail<TypeError>("Unknown gather mode \"", p.str(), "\"");
}

void check_sorted(const std::string& op, const std::string& name, const Ints& dims) {
  if (!std::is_sorted(dims.begin(), dims.end()))
    fail<TypeError>(name, " in ", op, " op must be sorted; got ", tup(dims));
}

void check_in_range(const std::string& op, const std::string& name, const Ints& dims,
                    std::int64_t rank) {
  for (std::int64_t d : dims)
    if (d < 0 || d >= rank)
      fail<TypeError>("Invalid ", name, " set in ", op, " op; valid range is [0, ", rank,
                      "); got: ", d, ".");
}

void check_no_duplicates(const std::string& op, const std::string& name, const Ints& dims) {
  if (std::set<std::int64_t>(dims.begin(), dims.end()).size() != dims.size())
    fail<TypeError>(name, " in ", op, " op must not repeat; got: ", tup(dims), ".");
}

void check_batching_dims(const std::string& op, const SliceMap& m, const Shape& operand,
                         const Shape& indices, const std::string& collapsed_name) {
  const std::string indices_name =
      op == "gather" ? "start_indices_batching_dims" : "scatter_indices_batching_dims";
  check_sorted(op, "operand_batching_dims", m.operand_batching_dims);
  check_in_range(op, "operand_batching_dims", m.operand_batching_dims,
                 static_cast<std::int64_t>(operand.size()));
  check_no_duplicates(op, "operand_batching_dims", m.operand_batching_dims);
  for (std::int64_t d : m.operand_batching_dims)
    if (contains(m.collapsed_dims, d))
      fail<TypeError>(collapsed_name, " and operand_batching_dims in ", op,
                      " op must be disjoint; got ", collapsed_name, "=", tup(m.collapsed_dims),
                      ", operand_batching_dims=", tup(m.operand_batching_dims), ".");
  check_in_range(op, indices_name, m.indices_batching_dims,
                 static_cast<std::int64_t>(indices.size()) - 1);
  check_no_duplicates(op, indices_name, m.indices_batching_dims);
  if (m.operand_batching_dims.size() != m.indices_batching_dims.size())
    fail<TypeError>(op, " requires operand_batching_dims and ", indices_name,
                    " of the same length, got ", tup(m.operand_batching_dims), " and ",
                    tup(m.indices_batching_dims), ".");
  for (std::size_t k = 0; k < m.operand_batching_dims.size(); ++k) {
    std::int64_t a = operand[static_cast<std::size_t>(m.operand_batching_dims[k])];
    std::int64_t b = indices[static_cast<std::size_t>(m.indices_batching_dims[k])];
    if (a != b)
      fail<TypeError>(op,
                      " requires operand batching dimensions and indices batching "
                      "dimensions to have the same shape, got ",
                      a, " and ", b, ".");
  }
}

void check_index_dtype(DType d) {
  if (!is_integral(d)) fail<TypeError>("indices must have an integer type");
}

}  // namespace jx::gs
