// What gather.cpp and scatter.cpp share: their params as JAX prints them (dimension numbers as
// named records, the mode as GatherScatterMode.X) and the checks both shape rules make.
#pragma once

#include <optional>
#include <string>

#include "core/slice_map.hpp"
#include "jx/lax.hpp"
#include "primitives/layout.hpp"

namespace jx::gs {

using layout::Ints;
using Mode = lax::GatherScatterMode;

Param gather_dnums_param(const lax::GatherDimensionNumbers& d);
Param scatter_dnums_param(const lax::ScatterDimensionNumbers& d);
lax::GatherDimensionNumbers gather_dnums(const Params& params);
lax::ScatterDimensionNumbers scatter_dnums(const Params& params);
// The common names of either kind of dimension numbers (core/slice_map.hpp).
SliceMap slice_map(const lax::GatherDimensionNumbers& d);
SliceMap slice_map(const lax::ScatterDimensionNumbers& d);

Param mode_param(Mode mode);  // GatherScatterMode.FILL_OR_DROP, ...
Mode mode_of(const Params& params);

// JAX's checks on a sorted-or-not list of dims of `op`: "offset_dims in gather op must be
// sorted; got (1, 0)", "Invalid collapsed_slice_dims set in gather op; valid range is [0, 2);
// got: 3.", "start_index_map in gather op must not repeat; got: (0, 0).".
void check_sorted(const std::string& op, const std::string& name, const Ints& dims);
void check_in_range(const std::string& op, const std::string& name, const Ints& dims,
                    std::int64_t rank);
void check_no_duplicates(const std::string& op, const std::string& name, const Ints& dims);
// Batching dims of the operand and the indices: equal counts, each in range and unrepeated,
// equal sizes, and (for the operand) apart from `collapsed`.
void check_batching_dims(const std::string& op, const SliceMap& m, const Shape& operand,
                         const Shape& indices, const std::string& collapsed_name);
// JAX's dtype rule: "indices must have an integer type".
void check_index_dtype(DType d);

}  // namespace jx::gs
