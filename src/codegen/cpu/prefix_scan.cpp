#include "codegen/cpu/prefix_scan.hpp"

#include <algorithm>
#include <functional>

#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/TargetParser/Triple.h>

#include "core/buffer.hpp"
#include "hlo/window.hpp"
#include "jx/config.hpp"
#include "support/check.hpp"

namespace jx::codegen::cpu {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using Values = std::vector<llvm::Value*>;

// Accumulators of one run along the last dim: a stack array of this many elements at most
// (16 KiB of float), so that each step along the axis reads a long contiguous stretch.
constexpr std::int64_t kRun = 4096;
// A run of a scan that streams prefetches its operand's run this many positions ahead along the
// axis: a run is a short stretch at a long stride, which the hardware prefetchers follow late
// (cumsum of f32[4096, 4096] along axis 0 on two threads, 8 KiB runs: 10-20% faster at 1 to 3).
constexpr std::int64_t kRunPrefetchAhead = 2;
// A scan along the last dim that streams reads its operand this many bytes ahead of each vector:
// the hardware prefetchers alone keep too few lines in flight for one core's demand (cumsum of
// f32[16M] from memory, ms, none / 1, 2, 4 and 8 KiB ahead: two threads 5.5 / 5.4, 5.1, 4.6 and
// 4.6, 4.8 at 16 KiB; one thread 8.1 / 6.6 at 4 KiB).
constexpr std::int64_t kVectorReadAhead = 4096;
// A row scan's vector: this many bytes of the compute type, 16 lanes at most; where the core
// splits 256-bit operations in two, one 128-bit half, whose prefix needs no shuffle across
// halves (Zen 1, one thread, cumsum ns per 8 elements in cache: 6.0 at 64 bytes, 6.4 at 32, 4.2
// at 16; two threads, f32[16M] 10.3 -> 8.3 ms, rows of f32[4096, 4096] 8.5 -> 7.8 ms).
constexpr std::size_t kVectorBytes = 64, kHalfWidthVectorBytes = 16;
// A row scan's chunk: its operand elements are computed into a stack buffer of this many (a
// multiple of every vector width, 8 KiB of f64 at most, so it stays in L1) before the scan.
constexpr std::int64_t kChunk = 1024;
// A tiled scan's tile (scan_tiles): 32768 positions, 128 KiB of f32, whose output stays in L2
// between its scan and the pass that combines the prefix into it.
constexpr std::int64_t kTile = std::int64_t{1} << 15;
// Rows at least two tiles long are tiled while there are fewer of them than this (a large
// CPU's cores); more rows keep every core busy one row at a time.
constexpr std::int64_t kFewRows = 16;

// The lanes of a row scan's vector of `d`.
unsigned vector_width(DType d) {
  std::size_t bytes = configured_cpu_isa().full_width_256 ? kVectorBytes : kHalfWidthVectorBytes;
  return static_cast<unsigned>(std::clamp<std::size_t>(bytes / itemsize(compute_dtype(d)), 2, 16));
}

// The positions of a row of n that are scanned a vector at a time, from its start; the rest
// are scanned one by one.
std::int64_t vector_positions(std::int64_t n, DType d) {
  return n / vector_width(d) * vector_width(d);
}

// The tiles a tiled scan cuts a row of n into (the last one ends at its vector positions).
std::int64_t tiles_per_row(std::int64_t n, DType d) {
  return (vector_positions(n, d) + kTile - 1) / kTile;
}

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
              const ElementGenerator& init, llvm::Value* out, llvm::Value* scratch,
              llvm::Value* source, std::int64_t aligned, bool streams)
      : em_(em),
        b_(em.b()),
        scan_(scan),
        f_(*scan.called[0]),
        operand_(operand),
        out_(out),
        scratch_(scratch),
        source_(compute_dtype(scan.shape.dtype) == scan.shape.dtype ? source : nullptr),
        dims_(scan.shape.dims),
        dtype_(scan.shape.dtype),
        type_(em.type(dtype_)),
        init_(init(em.scalar_index())),
        aligned_(aligned),
        streams_(streams) {
    hlo::PrefixScan p = *hlo::as_prefix_scan(scan);
    axis_ = static_cast<std::size_t>(p.axis);
    reverse_ = p.reverse;
    n_ = dims_[axis_];
  }

  void emit(const std::optional<OuterRange>& rows, bool rows_span_leading_dims) {
    if (std::int64_t tiles = scan_tiles(scan_)) {
      JX_CHECK(scratch_);
      tiled(tiles);
      return;
    }
    if (axis_ == 0) {  // rows are a range of dimension 1
      if (dims_.size() == 1)
        row({});
      else
        runs({}, rows);
      return;
    }
    Shape before(dims_.begin(), dims_.begin() + static_cast<std::ptrdiff_t>(axis_));
    auto scan_at = [&](const IrIndex& outer) {
      if (axis_ + 1 == dims_.size())
        row(outer.dims);
      else
        runs(outer.dims, std::nullopt);
    };
    if (!rows_span_leading_dims) return emit_loop_nest(em_, before, "scan.outer", scan_at, rows);
    emit_loop_nest(
        em_, {shape_size(before)}, "scan.outer",
        [&](const IrIndex& r) { scan_at(em_.delinearize_loop_index(r.dims[0], before)); }, rows);
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
  void row(const Values& before) {
    if (!vector_combiner(scan_) || n_ < 2 * static_cast<std::int64_t>(width())) {
      sequential(before, em_.i64(0), init_);
      return;
    }
    std::int64_t full = vector_positions(n_, dtype_);
    llvm::Value* last = vector_scan(before, em_.i64(0), em_.i64(full), init_);
    if (full < n_) sequential(before, em_.i64(full), last);
  }

  // A tiled scan (scan_tiles): tiles claimed from the ticket until none is left.
  void tiled(std::int64_t tiles) {
    tiles_ = tiles;
    llvm::Value* t = nullptr;  // the tile claimed
    auto claim = [&] {
      t = b_.CreateAtomicRMW(llvm::AtomicRMWInst::Add, scratch_word(em_.i64(0)), em_.i64(1),
                             llvm::Align(8), llvm::AtomicOrdering::Monotonic);
      return b_.CreateICmpULT(t, em_.i64(tiles));
    };
    emit_while(em_, "scan.tiles", claim, [&] { scan_tile(t); });
  }

  // The scratch (scan_scratch_words): the ticket, then a flag per tile, then a prefix per tile.
  llvm::Value* scratch_word(llvm::Value* k) {
    return b_.CreateInBoundsGEP(b_.getInt64Ty(), scratch_, k);
  }
  llvm::Value* flag(llvm::Value* t) { return scratch_word(b_.CreateAdd(t, em_.i64(1))); }
  // Whether tile t has published its prefix; if so, the prefix is visible.
  llvm::Value* published(llvm::Value* t) {
    llvm::LoadInst* word = b_.CreateAlignedLoad(b_.getInt64Ty(), flag(t), llvm::Align(8));
    word->setAtomic(llvm::AtomicOrdering::Acquire);
    return b_.CreateICmpNE(word, em_.i64(0));
  }
  llvm::Value* prefix_of(llvm::Value* t) {
    return scratch_word(b_.CreateAdd(t, em_.i64(1 + tiles_)));
  }

  // Tile t of a tiled scan: its row's scan positions [lo, hi), and the rest of the row when it
  // is the row's last.
  void scan_tile(llvm::Value* t) {
    std::int64_t full = vector_positions(n_, dtype_), per_row = tiles_per_row(n_, dtype_);
    Shape outer(dims_.begin(), dims_.end() - 1);
    llvm::Value* in_row = b_.CreateURem(t, em_.i64(per_row), "tile_in_row");
    Values before = em_.delinearize(b_.CreateUDiv(t, em_.i64(per_row)), outer).dims;
    llvm::Value* lo = b_.CreateMul(in_row, em_.i64(kTile), "", true, true);
    llvm::Value* hi = b_.CreateBinaryIntrinsic(
        llvm::Intrinsic::smin, b_.CreateAdd(lo, em_.i64(kTile), "", true, true), em_.i64(full));
    llvm::Value* first = b_.CreateICmpEQ(in_row, em_.i64(0));
    llvm::Value* previous = b_.CreateSub(t, em_.i64(1));
    // Whether the prefix before the tile is known as it starts: init for a row's first tile,
    // else whether the tile before has published it (always, when one thread runs them all).
    llvm::Value* known = em_.if_else(
        first, [&] { return b_.getTrue(); }, [&] { return published(previous); }, "scan.known");
    llvm::Value* early = em_.if_else(
        first, [&] { return init_; },
        [&] {
          return em_.if_else(
              known, [&] { return b_.CreateLoad(type_, prefix_of(previous)); },
              [&] { return identity(); }, "scan.published");
        },
        "scan.early");
    // The tile's own scan, from the identity: each value stored combined with the prefix when
    // that is known, else no value stored, only the last kept (the read brings the tile's operand
    // into L2 for the second scan below). The same code either way, so the same last value.
    llvm::Value* own = em_.if_else(
        known, [&] { return vector_scan(before, lo, hi, identity(), early); },
        [&] { return vector_scan(before, lo, hi, identity(), nullptr, /*stores=*/false); },
        "scan.own");
    llvm::Value* prefix = em_.if_else(
        known, [&] { return early; },
        [&] {
          await_published(previous);
          return b_.CreateLoad(type_, prefix_of(previous));
        },
        "scan.prefix");
    llvm::Value* inclusive = em_.apply(f_, {prefix, own});
    llvm::Value* last = b_.CreateICmpEQ(in_row, em_.i64(per_row - 1));
    emit_if(em_, b_.CreateNot(last), "scan.publish", [&] {
      b_.CreateStore(inclusive, prefix_of(t));
      b_.CreateAlignedStore(em_.i64(1), flag(t), llvm::Align(8))
          ->setAtomic(llvm::AtomicOrdering::Release);
    });
    // Published first, so that the tile after need not wait for this one's stores.
    emit_if(em_, b_.CreateNot(known), "scan.store",
            [&] { vector_scan(before, lo, hi, identity(), prefix); });
    if (full < n_)
      emit_if(em_, last, "scan.tail", [&] { sequential(before, em_.i64(full), inclusive); });
  }

  // The combiner's identity: x ⊕ identity() = x for every x (-0.0 for a float sum, so that
  // -0.0 stays).
  llvm::Value* identity() {
    bool fp = is_floating(dtype_), is_unsigned_int = is_unsigned(dtype_);
    unsigned bits = type_->getPrimitiveSizeInBits();
    switch (*hlo::binary_combiner(f_)) {
      case Opcode::kAdd:
        return fp ? llvm::ConstantFP::getNegativeZero(type_) : llvm::ConstantInt::get(type_, 0);
      case Opcode::kMultiply:
        return fp ? llvm::ConstantFP::get(type_, 1.0) : llvm::ConstantInt::get(type_, 1);
      case Opcode::kMaximum:
        return fp ? llvm::ConstantFP::getInfinity(type_, /*Negative=*/true)
                  : llvm::ConstantInt::get(type_, is_unsigned_int
                                                      ? llvm::APInt::getMinValue(bits)
                                                      : llvm::APInt::getSignedMinValue(bits));
      case Opcode::kMinimum:
        return fp ? llvm::ConstantFP::getInfinity(type_)
                  : llvm::ConstantInt::get(type_, is_unsigned_int
                                                      ? llvm::APInt::getMaxValue(bits)
                                                      : llvm::APInt::getSignedMaxValue(bits));
      case Opcode::kAnd:
        return llvm::ConstantInt::get(type_, llvm::APInt::getAllOnes(bits));
      default:  // kOr (vector_combiner)
        return llvm::ConstantInt::get(type_, 0);
    }
  }

  // Spins until tile t has published its prefix.
  void await_published(llvm::Value* t) {
    emit_while(
        em_, "scan.wait", [&] { return b_.CreateNot(published(t)); },
        [&] {
          if (llvm::Triple(em_.module().getTargetTriple()).isX86())
            b_.CreateIntrinsic(llvm::Intrinsic::x86_sse2_pause, {}, {});
        });
  }

  unsigned width() const { return vector_width(dtype_); }

  // Calls each(v, k) for the operand's elements at scan positions [lo, hi) (a multiple of
  // width() long), a vector v of scan positions k.. at a time: read from the source where there
  // is one, else a chunk computed at a time.
  void for_each_vector(const Values& before, llvm::Value* lo, llvm::Value* hi,
                       const std::function<void(llvm::Value*, llvm::Value*)>& each) {
    auto* vt = llvm::FixedVectorType::get(type_, width());
    if (source_) {
      llvm::Value* row_base = index(before, em_.i64(0), {}).linear;
      emit_strided_for(
          em_, lo, hi, width(), "scan.vector",
          [&](llvm::Value* k) {
            // Reversed, the vector of positions k.. lies mirrored at the lowest of its addresses.
            llvm::Value* first =
                reverse_ ? b_.CreateSub(em_.i64(n_ - width()), k, "", true, true) : k;
            if (streams_) prefetch_ahead(row_base, k);
            llvm::Value* v = b_.CreateAlignedLoad(
                vt,
                b_.CreateInBoundsGEP(type_, source_, b_.CreateAdd(row_base, first, "", true, true)),
                llvm::Align(itemsize(dtype_)));
            each(reverse_ ? reversed(v) : v, k);
          },
          /*vectorize=*/false);
      return;
    }
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

  // A prefetch of the operand kVectorReadAhead bytes past scan position k of the row at
  // row_base, in scan order: forward into the next row, which follows it; reversed, before k in
  // memory, or past the row's end into the next row's last elements, where it scans next.
  void prefetch_ahead(llvm::Value* row_base, llvm::Value* k) {
    llvm::Value* next = b_.CreateAdd(k, em_.i64(kVectorReadAhead / itemsize(dtype_)));
    llvm::Value* offset = next;
    if (reverse_) {
      llvm::Value* in_row = b_.CreateSub(em_.i64(n_ - 1), next);
      offset = b_.CreateSelect(b_.CreateICmpSLT(next, em_.i64(n_)), in_row,
                               b_.CreateAdd(in_row, em_.i64(2 * n_)));
    }
    em_.prefetch(b_.CreateGEP(type_, source_, b_.CreateAdd(row_base, offset)));
  }

  // Scans positions [lo, hi) from `carry`, storing every result, or `offset` ⊕ it when given
  // (nothing without `stores`); the last result (without the offset).
  llvm::Value* vector_scan(const Values& before, llvm::Value* lo, llvm::Value* hi,
                           llvm::Value* carry_in, llvm::Value* offset = nullptr,
                           bool stores = true) {
    unsigned w = width();
    llvm::AllocaInst* carry = em_.entry_alloca(type_, "scan.carry");
    b_.CreateStore(carry_in, carry);
    llvm::Value* offsets = offset ? b_.CreateVectorSplat(w, offset) : nullptr;
    llvm::Value* row_base = index(before, em_.i64(0), {}).linear;
    for_each_vector(before, lo, hi, [&](llvm::Value* v, llvm::Value* k) {
      llvm::Value* p = prefix(v);
      llvm::Value* c = b_.CreateLoad(type_, carry);
      llvm::Value* result = em_.apply(f_, {b_.CreateVectorSplat(w, c), p});
      // The next carry is the last lane's value, c ⊕ p's last lane: computed as a scalar, it
      // keeps the broadcast off the loop's chain of carries (one operation a vector).
      b_.CreateStore(em_.apply(f_, {c, b_.CreateExtractElement(p, std::uint64_t{w - 1})}), carry);
      if (!stores) return;
      if (offsets) result = em_.apply(f_, {offsets, result});
      // Lane l is scan position k + l: forward at row_base + that, reversed mirrored, so the
      // vector lands reversed at the lowest of its addresses.
      llvm::Value* first = reverse_ ? b_.CreateSub(em_.i64(n_ - w), k, "", true, true) : k;
      store_vector(reverse_ ? reversed(result) : result,
                   b_.CreateAdd(row_base, first, "", true, true));
    });
    return b_.CreateLoad(type_, carry);
  }

  // Lane l of v becomes v[0] ⊕ ... ⊕ v[l]: each lane takes in the lane s before it, the lanes
  // before s the identity, which leaves them as they are, for s = 1, 2, 4, ...: a shuffle and an
  // operation a step (selecting the lanes instead added blends: an AVX-512 scan of a row in
  // cache ran at 21 cycles a vector, this form and the scalar carry at 7).
  llvm::Value* prefix(llvm::Value* v) {
    unsigned width = this->width();
    llvm::Value* identities = b_.CreateVectorSplat(width, identity());
    for (unsigned s = 1; s < width; s *= 2) {
      llvm::SmallVector<int, 16> from;
      for (unsigned l = 0; l < width; ++l)
        from.push_back(static_cast<int>(l >= s ? l - s : width));  // `width`: identities' first
      v = em_.apply(f_, {b_.CreateShuffleVector(v, identities, from), v});
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

  // Prefetches of the operand's run at [j0, j0 + len) of the last dim kRunPrefetchAhead
  // positions past the k-th along the axis (the last position where fewer are left), a cache
  // line at a time, in a loop of its own: a prefetch keeps a loop from vectorizing.
  void prefetch_run(const Values& before, llvm::Value* k, const Values& middle, llvm::Value* j0,
                    llvm::Value* len) {
    llvm::Value* ahead = b_.CreateBinaryIntrinsic(
        llvm::Intrinsic::umin, b_.CreateAdd(k, em_.i64(kRunPrefetchAhead)), em_.i64(n_ - 1));
    Values after = middle;
    after.push_back(j0);
    llvm::Value* start = index(before, position(ahead), after).linear;
    emit_strided_for(
        em_, em_.i64(0), len, Buffer::kAlignment / itemsize(dtype_), "scan.prefetch",
        [&](llvm::Value* e) {
          em_.prefetch(
              b_.CreateInBoundsGEP(type_, source_, b_.CreateAdd(start, e, "", true, true)));
        },
        /*vectorize=*/false);
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
    // Without dims between, the range is one of the last dim. Its ends rounded down to a
    // multiple of aligned_ (but the dim's end) still cover the dim, and make every run start
    // there.
    bool ranged_last = range && middle.empty();
    auto rounded = [&](llvm::Value* k) { return b_.CreateAnd(k, em_.i64(-aligned_)); };
    llvm::Value* first = ranged_last ? rounded(range->begin) : em_.i64(0);
    llvm::Value* last = em_.i64(m);
    if (ranged_last)
      last = b_.CreateSelect(b_.CreateICmpEQ(range->end, last), last, rounded(range->end));
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
                  if (source_ && streams_) prefetch_run(before, k, mid.dims, j0, len);
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
  llvm::Value* scratch_;
  llvm::Value* source_;  // the operand as stored, when a buffer holds it
  const Shape& dims_;
  DType dtype_;
  llvm::Type* type_;
  llvm::Value* init_;
  std::size_t axis_ = 0;
  bool reverse_ = false;
  std::int64_t n_ = 0;
  std::int64_t tiles_ = 0;  // of a tiled scan
  std::int64_t aligned_ = 1;
  bool streams_ = false;
};

}  // namespace

std::int64_t scan_tiles(const Instruction& scan) {
  std::optional<hlo::PrefixScan> p = hlo::as_prefix_scan(scan);
  const Shape& dims = scan.shape.dims;
  if (!p || static_cast<std::size_t>(p->axis) + 1 != dims.size() || !vector_combiner(scan) ||
      compute_dtype(scan.shape.dtype) != scan.shape.dtype || dims.back() < 2 * kTile)
    return 0;
  std::int64_t rows = shape_size(dims) / dims.back();
  return rows < kFewRows ? rows * tiles_per_row(dims.back(), scan.shape.dtype) : 0;
}

std::int64_t scan_part_columns(const CpuIsa& isa, const Instruction& scan) {
  std::optional<hlo::PrefixScan> p = hlo::as_prefix_scan(scan);
  if (!p || p->axis != 0 || scan.shape.dims.size() != 2) return 1;
  std::int64_t bytes = 2 * scan.shape.size() * itemsize(scan.shape.dtype);  // read and written
  if (bytes < isa.last_level_cache / 4) return 1;
  constexpr std::int64_t kPartBytes = 8 << 10;
  return kPartBytes / itemsize(scan.shape.dtype);
}

void emit_prefix_scan(ElementalEmitter& em, const Instruction& scan,
                      const ElementGenerator& operand, const ElementGenerator& init,
                      llvm::Value* out, const std::optional<OuterRange>& rows,
                      bool rows_span_leading_dims, llvm::Value* scratch, llvm::Value* source,
                      std::int64_t aligned, bool streams) {
  if (scan.shape.size() == 0) return;
  ScanEmitter(em, scan, operand, init, out, scratch, source, aligned, streams)
      .emit(rows, rows_span_leading_dims);
}

}  // namespace jx::codegen::cpu
