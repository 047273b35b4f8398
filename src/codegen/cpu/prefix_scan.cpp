#include "codegen/cpu/prefix_scan.hpp"

#include <algorithm>
#include <functional>

#include "hlo/window.hpp"
#include "support/check.hpp"

namespace jx::codegen::cpu {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using Values = std::vector<llvm::Value*>;

// Accumulators of one run along the last dim: a stack array of this many elements at most
// (16 KiB of float), so that each step along the axis reads a long contiguous stretch.
constexpr std::int64_t kRun = 4096;
// A row scan's vector: this many bytes of the compute type, 16 lanes at most.
constexpr std::size_t kVectorBytes = 64;
// A row scan's chunk: its operand elements are computed into a stack buffer of this many (a
// multiple of every vector width, 8 KiB of f64 at most, so it stays in L1) before the scan.
constexpr std::int64_t kChunk = 1024;
// A 1-d scan at least this long runs in two parts, one per thread (splits_row_scan).
constexpr std::int64_t kMinSplitRow = std::int64_t{1} << 16;

// Where a split 1-d scan's second part starts: 2/3 of the way, in whole chunks.
std::int64_t split_point(std::int64_t n) { return 2 * n / 3 / kChunk * kChunk; }

// Whether the combiner is one commutative opcode of both parameters, which the emitters apply
// to vectors as to scalars.
bool vector_combiner(const Instruction& scan) {
  DType d = scan.shape.dtype;
  std::optional<Opcode> op = hlo::binary_combiner(*scan.called[0]);
  if (d == bool_ || !op) return false;
  switch (*op) {
    case Opcode::kAdd:
    case Opcode::kMultiply:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
      return true;
    case Opcode::kAnd:
    case Opcode::kOr:
      return !is_floating(d);
    default:
      return false;
  }
}

class ScanEmitter {
 public:
  ScanEmitter(ElementalEmitter& em, const Instruction& scan, const ElementGenerator& operand,
              const ElementGenerator& init, llvm::Value* out)
      : em_(em),
        b_(em.b()),
        scan_(scan),
        f_(*scan.called[0]),
        operand_(operand),
        out_(out),
        dims_(scan.shape.dims),
        dtype_(scan.shape.dtype),
        type_(em.type(dtype_)),
        init_(init(em.scalar_index())) {
    hlo::PrefixScan p = *hlo::as_prefix_scan(scan);
    axis_ = static_cast<std::size_t>(p.axis);
    reverse_ = p.reverse;
    n_ = dims_[axis_];
  }

  void emit(const std::optional<OuterRange>& rows) {
    if (axis_ == 0) {  // rows are a range of dimension 1, or of a 1-d scan's two parts
      if (dims_.size() == 1)
        row({}, rows);
      else
        runs({}, rows);
      return;
    }
    Shape before(dims_.begin(), dims_.begin() + static_cast<std::ptrdiff_t>(axis_));
    emit_loop_nest(
        em_, before, "scan.outer",
        [&](const IrIndex& outer) {
          if (axis_ + 1 == dims_.size())
            row(outer.dims);
          else
            runs(outer.dims, std::nullopt);
        },
        rows);
  }

 private:
  // The scan's k-th position along the axis.
  llvm::Value* position(llvm::Value* k) {
    return reverse_ ? b_.CreateSub(em_.i64(n_ - 1), k, "", true, true) : k;
  }

  IrIndex index(const Values& before, llvm::Value* pos, const Values& after) {
    IrIndex i{before, nullptr};
    i.dims.push_back(pos);
    i.dims.insert(i.dims.end(), after.begin(), after.end());
    i.linear = em_.linear_index(i, dims_);
    return i;
  }

  // acc ⊕ x[i], stored at i; the new accumulator.
  llvm::Value* step(llvm::Value* acc, const IrIndex& i) {
    llvm::Value* v = em_.apply(f_, {acc, operand_(i)});
    em_.store(dtype_, v, out_, i.linear);
    return v;
  }

  // Positions [begin, end) of one row in order, from `acc`; the final accumulator.
  llvm::Value* sequential(const Values& before, llvm::Value* begin, llvm::Value* acc) {
    llvm::AllocaInst* slot = em_.entry_alloca(type_, "scan.acc");
    b_.CreateStore(acc, slot);
    emit_for(
        em_, begin, em_.i64(n_), "scan",
        [&](llvm::Value* k) {
          b_.CreateStore(step(b_.CreateLoad(type_, slot), index(before, position(k), {})), slot);
        },
        /*vectorize=*/false);
    return b_.CreateLoad(type_, slot);
  }

  // A scan along the last dim. With a vector combiner, a chunk of kChunk elements at a time:
  // the operand's elements into a stack buffer (a loop LLVM vectorizes, as any elementwise
  // kernel), then the buffer scanned a vector at a time into the output while it is in L1.
  // `parts` (a long 1-d scan, splits_row_scan): part 0 scans positions [0, a) from init; part 1
  // folds them into its carry first, then scans [a, n). a is 2/3 of n, so that both parts take
  // about as long: part 0 reads and writes a elements, part 1 reads a and reads and writes the
  // rest.
  void row(const Values& before, const std::optional<OuterRange>& parts = std::nullopt) {
    if (!vector_combiner(scan_) || n_ < 2 * static_cast<std::int64_t>(width())) {
      sequential(before, em_.i64(0), init_);
      return;
    }
    std::int64_t full = n_ / width() * width();  // scan positions a vector at a time
    if (!parts) {
      llvm::Value* last = vector_scan(before, em_.i64(0), em_.i64(full), init_);
      if (full < n_) sequential(before, em_.i64(full), last);
      return;
    }
    std::int64_t a = split_point(n_);
    emit_for(
        em_, parts->begin, parts->end, "scan.part",
        [&](llvm::Value* part) {
          llvm::Value* first = b_.CreateICmpEQ(part, em_.i64(0));
          llvm::Value* carry = em_.if_else(
              first, [&] { return init_; },
              [&] {
                return em_.apply(f_, {init_, fold(before, em_.i64(0), em_.i64(a))});
              },
              "scan.carry_in");
          llvm::Value* lo = b_.CreateSelect(first, em_.i64(0), em_.i64(a));
          llvm::Value* hi = b_.CreateSelect(first, em_.i64(a), em_.i64(full));
          llvm::Value* last = vector_scan(before, lo, hi, carry);
          if (full < n_)  // constant bounds make a loop that runs at least once
            em_.if_else(
                first, [&] { return last; },
                [&] { return sequential(before, em_.i64(full), last); }, "scan.tail");
        },
        /*vectorize=*/false);
  }

  unsigned width() const {
    return static_cast<unsigned>(
        std::clamp<std::size_t>(kVectorBytes / itemsize(compute_dtype(dtype_)), 2, 16));
  }

  // Calls each(v, k) for the operand's elements at scan positions [lo, hi) (a multiple of
  // width() long), a vector v of scan positions k.. at a time, a chunk computed at a time.
  void for_each_vector(const Values& before, llvm::Value* lo, llvm::Value* hi,
                       const std::function<void(llvm::Value*, llvm::Value*)>& each) {
    auto* vt = llvm::FixedVectorType::get(type_, width());
    auto* buffer_type = llvm::ArrayType::get(type_, static_cast<std::uint64_t>(kChunk));
    llvm::AllocaInst* buffer = em_.entry_alloca(buffer_type, "scan.chunk");
    emit_strided_for(
        em_, lo, hi, kChunk, "scan.chunk",
        [&](llvm::Value* chunk) {
          llvm::Value* len = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, em_.i64(kChunk),
                                                      b_.CreateSub(hi, chunk));
          emit_for(em_, em_.i64(0), len, "scan.load", [&](llvm::Value* j) {
            llvm::Value* k = b_.CreateAdd(chunk, j, "", true, true);
            b_.CreateStore(operand_(index(before, position(k), {})),
                           b_.CreateInBoundsGEP(buffer_type, buffer, {em_.i64(0), j}));
          });
          emit_strided_for(
              em_, em_.i64(0), len, width(), "scan.vector",
              [&](llvm::Value* j) {
                llvm::Value* v = b_.CreateAlignedLoad(
                    vt, b_.CreateInBoundsGEP(buffer_type, buffer, {em_.i64(0), j}),
                    llvm::Align(itemsize(dtype_)));
                each(v, b_.CreateAdd(chunk, j, "", true, true));
              },
              /*vectorize=*/false);
        },
        /*vectorize=*/false);
  }

  // Scans positions [lo, hi) from `carry`, storing every result; the last one.
  llvm::Value* vector_scan(const Values& before, llvm::Value* lo, llvm::Value* hi,
                           llvm::Value* carry_in) {
    unsigned w = width();
    auto* vt = llvm::FixedVectorType::get(type_, w);
    llvm::AllocaInst* carry = em_.entry_alloca(vt, "scan.carry");
    b_.CreateStore(b_.CreateVectorSplat(w, carry_in), carry);
    llvm::Value* row_base = index(before, em_.i64(0), {}).linear;
    for_each_vector(before, lo, hi, [&](llvm::Value* v, llvm::Value* k) {
      llvm::Value* result = em_.apply(f_, {b_.CreateLoad(vt, carry), prefix(v)});
      llvm::SmallVector<int, 16> last(w, static_cast<int>(w - 1));
      b_.CreateStore(b_.CreateShuffleVector(result, last), carry);
      // Lane l is scan position k + l: forward at row_base + that, reversed mirrored, so the
      // vector lands reversed at the lowest of its addresses.
      llvm::Value* first = reverse_ ? b_.CreateSub(em_.i64(n_ - w), k, "", true, true) : k;
      store_vector(reverse_ ? reversed(result) : result,
                   b_.CreateAdd(row_base, first, "", true, true));
    });
    return b_.CreateExtractElement(b_.CreateLoad(vt, carry), std::uint64_t{0});
  }

  // The operand's elements at scan positions [lo, hi) folded together (lane by lane, then the
  // lanes in order), at least one vector of them.
  llvm::Value* fold(const Values& before, llvm::Value* lo, llvm::Value* hi) {
    unsigned w = width();
    auto* vt = llvm::FixedVectorType::get(type_, w);
    llvm::AllocaInst* acc = em_.entry_alloca(vt, "scan.fold");
    for_each_vector(before, lo, hi, [&](llvm::Value* v, llvm::Value* k) {
      llvm::Value* so_far = b_.CreateLoad(vt, acc);
      b_.CreateStore(b_.CreateSelect(b_.CreateICmpEQ(k, lo), v, em_.apply(f_, {so_far, v})), acc);
    });
    llvm::Value* lanes = b_.CreateLoad(vt, acc);
    llvm::Value* total = b_.CreateExtractElement(lanes, std::uint64_t{0});
    for (unsigned l = 1; l < w; ++l)
      total = em_.apply(f_, {total, b_.CreateExtractElement(lanes, l)});
    return total;
  }

  // Lane l of v becomes v[0] ⊕ ... ⊕ v[l]: lanes from s on take in the lane s before them, for
  // s = 1, 2, 4, ...
  llvm::Value* prefix(llvm::Value* v) {
    unsigned width = this->width();
    for (unsigned s = 1; s < width; s *= 2) {
      llvm::SmallVector<int, 16> from;
      llvm::SmallVector<llvm::Constant*, 16> keep;
      for (unsigned l = 0; l < width; ++l) {
        from.push_back(l >= s ? static_cast<int>(l - s) : 0);
        keep.push_back(b_.getInt1(l >= s));
      }
      llvm::Value* earlier = b_.CreateShuffleVector(v, from);
      v = b_.CreateSelect(llvm::ConstantVector::get(keep), em_.apply(f_, {earlier, v}), v);
    }
    return v;
  }

  llvm::Value* reversed(llvm::Value* v) {
    unsigned width = this->width();
    llvm::SmallVector<int, 16> lanes;
    for (unsigned l = 0; l < width; ++l) lanes.push_back(static_cast<int>(width - 1 - l));
    return b_.CreateShuffleVector(v, lanes);
  }

  // The lanes of v at out[linear], out[linear + 1], ...: one vector store where the output is
  // stored as computed, else lane by lane, rounded.
  void store_vector(llvm::Value* v, llvm::Value* linear) {
    if (compute_dtype(dtype_) == dtype_) {
      b_.CreateAlignedStore(v, b_.CreateInBoundsGEP(type_, out_, linear),
                            llvm::Align(itemsize(dtype_)));
      return;
    }
    for (unsigned l = 0; l < width(); ++l)
      em_.store(dtype_, b_.CreateExtractElement(v, l), out_,
                b_.CreateAdd(linear, em_.i64(l), "", true, true));
  }

  // A scan along a dim with dims after it: for each position of the dims between, runs of up to
  // kRun along the last dim, each with a row of accumulators updated a position at a time.
  // `range` limits the first dim after the axis (a thread's part).
  void runs(const Values& before, const std::optional<OuterRange>& range) {
    Shape middle(dims_.begin() + static_cast<std::ptrdiff_t>(axis_) + 1, dims_.end() - 1);
    std::int64_t m = dims_.back(), run = std::min(m, kRun);
    auto* array = llvm::ArrayType::get(type_, static_cast<std::uint64_t>(run));
    llvm::AllocaInst* acc = em_.entry_alloca(array, "scan.accs");
    auto slot = [&](llvm::Value* j) { return b_.CreateInBoundsGEP(array, acc, {em_.i64(0), j}); };
    // Without dims between, the range is one of the last dim.
    bool ranged_last = range && middle.empty();
    llvm::Value* first = ranged_last ? range->begin : em_.i64(0);
    llvm::Value* last = ranged_last ? range->end : em_.i64(m);
    auto scan_runs = [&](const IrIndex& mid) {
      emit_strided_for(
          em_, first, last, run, "scan.run",
          [&](llvm::Value* j0) {
            llvm::Value* len = m <= run && !ranged_last
                                   ? em_.i64(m)
                                   : b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, em_.i64(run),
                                                              b_.CreateSub(last, j0));
            emit_for(em_, em_.i64(0), len, "scan.init",
                     [&](llvm::Value* j) { b_.CreateStore(init_, slot(j)); });
            emit_for(
                em_, n_, "scan",
                [&](llvm::Value* k) {
                  llvm::Value* pos = position(k);
                  emit_for(em_, em_.i64(0), len, "scan.lane", [&](llvm::Value* j) {
                    Values after = mid.dims;
                    after.push_back(b_.CreateAdd(j0, j, "", true, true));
                    llvm::Value* s = slot(j);
                    b_.CreateStore(step(b_.CreateLoad(type_, s), index(before, pos, after)), s);
                  });
                },
                /*vectorize=*/false);
          },
          /*vectorize=*/false);
    };
    emit_loop_nest(em_, middle, "scan.middle", scan_runs, middle.empty() ? std::nullopt : range);
  }

  ElementalEmitter& em_;
  llvm::IRBuilder<>& b_;
  const Instruction& scan_;
  const hlo::Computation& f_;
  const ElementGenerator& operand_;
  llvm::Value* out_;
  const Shape& dims_;
  DType dtype_;
  llvm::Type* type_;
  llvm::Value* init_;
  std::size_t axis_ = 0;
  bool reverse_ = false;
  std::int64_t n_ = 0;
};

}  // namespace

bool splits_row_scan(const Instruction& scan) {
  std::optional<hlo::PrefixScan> p = hlo::as_prefix_scan(scan);
  return p && scan.shape.dims.size() == 1 && vector_combiner(scan) &&
         scan.shape.dims[0] >= kMinSplitRow;
}

void emit_prefix_scan(ElementalEmitter& em, const Instruction& scan,
                      const ElementGenerator& operand, const ElementGenerator& init,
                      llvm::Value* out, const std::optional<OuterRange>& rows) {
  if (scan.shape.size() == 0) return;
  ScanEmitter(em, scan, operand, init, out).emit(rows);
}

}  // namespace jx::codegen::cpu
