// CPU codegen of reverse and reduce-window: the window generator against the HLO evaluator, the
// prefix scan's one pass against the window generator, a scan split over rows, and jitted
// cumulative reductions (their kernels, and long rows against the eager impl).
#include <atomic>
#include <chrono>
#include <cstring>
#include <sstream>
#include <thread>

#include <jx/jx.hpp>

#include "codegen/codegen_testing.hpp"
#include "hlo/evaluator.hpp"
#include "hlo/window.hpp"

namespace jx::codegen::testing {
namespace {

using hlo::Opcode;

// A reduce-window of `window` over a parameter of `dims` from a parameter init.
hlo::Instruction* window_op(Hlo& h, DType d, const Shape& dims, const hlo::Window& window,
                            Opcode combiner) {
  return h.b.reduce_window(h.param(0, d, dims), h.param(1, d, {}), window,
                           h.binary_region(combiner, d));
}

// The evaluator's value of `root` (the entry's root) on these inputs.
template <class T>
std::vector<T> evaluated(Hlo& h, hlo::Instruction* root, std::vector<Array> args) {
  h.main->set_root(root);
  return hlo::evaluate(*h.main, args).to_vector<T>();
}

Array host(const std::vector<double>& v, const Shape& dims) {
  return np::reshape(np::array(v), dims);
}

TEST_CASE("codegen: reverse and reduce-window generators match the evaluator",
          "[codegen][window]") {
  Shape dims{5, 6};
  std::vector<double> x;
  for (int k = 0; k < 30; ++k) x.push_back(std::cos(k * 0.9) * 8);
  double init = -0.25;
  const std::vector<hlo::Window> windows = {
      {{2, 2, 0, 0, 1, 1}, {3, 3, 0, 0, 1, 1}},
      {{3, 1, 1, 1, 1, 1}, {2, 2, 1, 2, 1, 1}},
      {{2, 1, 0, 1, 2, 1}, {3, 2, 1, 0, 1, 2}},
      {{1, 1, 0, 0, 1, 1}, {7, 1, 6, 0, 1, 1}},  // a cumulative sum the generator folds
  };
  for (Opcode op : {Opcode::kAdd, Opcode::kMaximum}) {
    for (const hlo::Window& w : windows) {
      Hlo h;
      hlo::Instruction* r = window_op(h, float64, dims, w, op);
      INFO(hlo::to_string(h.module));
      std::vector<double> got = run<double>(r, {x.data(), &init});
      check_all(got, evaluated<double>(h, r, {host(x, dims), np::array(init).astype(float64)}));
    }
  }
  Hlo h;
  hlo::Instruction* rev = h.op(Opcode::kReverse, float64, dims, {h.param(0, float64, dims)},
                               attrs({{"dimensions", Ints{1}}}));
  check_all(run<double>(rev, {x.data()}), evaluated<double>(h, rev, {host(x, dims)}));
}

// The prefix scan's window, and a window one wider padded one more: the same elements folded in
// the same order, which the generator computes (hlo::as_prefix_scan does not match it).
hlo::Window wider(hlo::Window w, int axis, bool reverse) {
  auto a = static_cast<std::size_t>(axis);
  ++w[a].size;
  ++(reverse ? w[a].pad_hi : w[a].pad_lo);
  return w;
}

template <class T>
void check_scan_matches_generator(DType d, Opcode op, const Shape& dims, int axis, bool reverse,
                                  bool exact) {
  // Float factors near 1, so that a product of thousands neither overflows nor vanishes.
  double scale = op == Opcode::kMultiply ? 0.01 : 3, offset = op == Opcode::kMultiply ? 1 : 0;
  std::vector<T> x;
  for (std::int64_t k = 0; k < shape_size(dims); ++k)
    x.push_back(
        static_cast<T>(is_floating(d) ? offset + std::sin(k * 0.37) * scale : (k * 7 % 11) - 5));
  T init = static_cast<T>(is_floating(d) ? 0.5 : 2);
  hlo::Window scan_window = hlo::prefix_scan_window(dims, axis, reverse);
  Hlo h1, h2;
  hlo::Instruction* scan = window_op(h1, d, dims, scan_window, op);
  hlo::Instruction* folded = window_op(h2, d, dims, wider(scan_window, axis, reverse), op);
  REQUIRE(hlo::as_prefix_scan(*scan));
  REQUIRE_FALSE(hlo::as_prefix_scan(*folded));
  INFO(hlo::to_string(h1.module));
  // Reassociated, a float fold's rounding error grows with the length of the axis.
  double rtol = exact ? 0 : 1e-6 * static_cast<double>(dims[static_cast<std::size_t>(axis)]);
  check_all(run<T>(scan, {x.data(), &init}), run<T>(folded, {x.data(), &init}), rtol);
}

TEST_CASE("codegen: a prefix scan's one pass matches the window generator", "[codegen][window]") {
  struct Case {
    Shape dims;
    int axis;
  };
  // Rows along the last dim (short, long enough for the vector scan, with a tail, and past two
  // chunks of 1024); runs of accumulators along other dims (one inner dim, several, and a last
  // dim past one run of 4096).
  const std::vector<Case> cases = {{{37}, 0},   {{3, 50}, 1},      {{2, 2085}, 1}, {{5, 7, 3}, 1},
                                   {{4, 6}, 0}, {{2, 3, 4, 5}, 1}, {{3, 4100}, 0}, {{2, 9, 40}, 2}};
  for (const Case& c : cases)
    for (bool reverse : {false, true}) {
      INFO("dims " << shape_str(c.dims) << " axis " << c.axis << (reverse ? " reversed" : ""));
      bool along_last = c.axis + 1 == static_cast<int>(c.dims.size());
      // Float sums and products fold in the generator's order, bit for bit, but along the last
      // dim (the vector scan reassociates) and reversed (the generator folds a window from its
      // first element, the scan from the axis' end). Max, min and integers are exact anyway.
      bool in_order = !along_last && !reverse;
      check_scan_matches_generator<float>(float32, Opcode::kAdd, c.dims, c.axis, reverse, in_order);
      check_scan_matches_generator<double>(float64, Opcode::kMultiply, c.dims, c.axis, reverse,
                                           in_order);
      check_scan_matches_generator<float>(float32, Opcode::kMaximum, c.dims, c.axis, reverse, true);
      check_scan_matches_generator<std::int32_t>(int32, Opcode::kAdd, c.dims, c.axis, reverse,
                                                 true);
      check_scan_matches_generator<std::uint8_t>(uint8, Opcode::kMultiply, c.dims, c.axis, reverse,
                                                 true);
      check_scan_matches_generator<std::int64_t>(int64, Opcode::kMinimum, c.dims, c.axis, reverse,
                                                 true);
      check_scan_matches_generator<BFloat16>(bfloat16, Opcode::kMaximum, c.dims, c.axis, reverse,
                                             true);
    }
}

// A scan splits over the dims before its axis taken together (a batch of one or a few still
// splits), or over dimension 1 when it scans dimension 0. Each runs in two parts (the first from
// row 3, the second up to it) against the whole kernel.
TEST_CASE("codegen: a scan splits over the dims before its axis, or 1 when it scans dimension 0",
          "[codegen][window]") {
  struct Case {
    Shape dims;
    int axis;
    std::int64_t rows;
  };
  for (const Case& c : std::vector<Case>{{{6, 40, 3}, 1, 6},
                                         {{6, 40}, 1, 6},
                                         {{40, 7}, 0, 7},
                                         {{30, 5, 3}, 0, 5},
                                         {{1, 9, 40}, 2, 9},
                                         {{2, 3, 5, 40}, 3, 30},
                                         {{2, 3, 20, 6}, 2, 6},
                                         {{1, 1, 7, 33}, 3, 7}}) {
    INFO("dims " << shape_str(c.dims) << " axis " << c.axis);
    Hlo h;
    hlo::Instruction* scan =
        window_op(h, float32, c.dims, hlo::prefix_scan_window(c.dims, c.axis, false), Opcode::kAdd);
    REQUIRE(kernel_rows(*scan) == c.rows);
    std::vector<float> x = ramp<float>(shape_size(c.dims), -100, 0.25), out(x.size());
    float init = 1;
    auto code = compile_kernels({{scan, "kernel", /*partitioned=*/true}}, {});
    auto fn = reinterpret_cast<KernelFn>(code->symbol("kernel"));
    void* buffers[] = {x.data(), &init, out.data()};
    fn(buffers, 3, c.rows);
    fn(buffers, 0, 3);
    check_all(out, run<float>(scan, {x.data(), &init}));
  }
  // A short 1-d scan runs whole.
  Hlo h0;
  CHECK(kernel_rows(*window_op(h0, float32, {50}, hlo::prefix_scan_window({50}, 0, true),
                               Opcode::kAdd)) == 1);
}

// A long scan along the last dim of few rows runs as tiles, which the kernel's calls claim in
// order from the ticket in its scratch, whatever rows they are given: one call, or several at
// once on threads of their own, scan every tile, and give the same values bit for bit.
TEST_CASE("codegen: a tiled scan's calls share its tiles, in one call or several at once",
          "[codegen][window]") {
  struct Case {
    Shape dims;
    // 32768 positions each, the last one ending at the vector positions (a multiple of 4 or
    // 16, as the host's scan vector holds 16 bytes or 64: the same tiles either way)
    std::int64_t tiles;
  };
  for (const Case& c : std::vector<Case>{{{100000 + 37}, 4}, {{3, 65536 + 3}, 6}}) {
    for (Opcode op : {Opcode::kAdd, Opcode::kMaximum})
      for (bool reverse : {false, true}) {
        INFO(shape_str(c.dims) << (op == Opcode::kAdd ? " add" : " max")
                               << (reverse ? " reversed" : ""));
        std::int64_t n = c.dims.back(), size = shape_size(c.dims);
        auto axis = static_cast<int>(c.dims.size()) - 1;
        Hlo h;
        hlo::Instruction* scan =
            window_op(h, int32, c.dims, hlo::prefix_scan_window(c.dims, axis, reverse), op);
        REQUIRE(kernel_rows(*scan) == c.tiles);
        REQUIRE(kernel_scratch_words(*scan) == 1 + 2 * c.tiles);
        std::vector<std::int32_t> x;
        for (std::int64_t k = 0; k < size; ++k)
          x.push_back(static_cast<std::int32_t>(k * 7 % 11) - 5);
        std::int32_t init = 3;
        std::vector<std::int32_t> want(x.size());
        for (std::int64_t row = 0; row < size / n; ++row) {
          std::int32_t acc = init;
          for (std::int64_t i = 0; i < n; ++i) {
            auto k = static_cast<std::size_t>(row * n + (reverse ? n - 1 - i : i));
            acc = op == Opcode::kAdd ? acc + x[k] : std::max(acc, x[k]);
            want[k] = acc;
          }
        }
        auto code = compile_kernels({{scan, "kernel", /*partitioned=*/true}}, {});
        auto fn = reinterpret_cast<KernelFn>(code->symbol("kernel"));
        auto words = static_cast<std::size_t>(kernel_scratch_words(*scan));
        std::vector<std::int32_t> one_call(x.size()), threads(x.size());
        std::vector<std::uint64_t> scratch(words);
        void* alone[] = {x.data(), &init, one_call.data(), scratch.data()};
        fn(alone, 1, 2);  // one call of one row still scans every tile
        CHECK(one_call == want);
        std::vector<std::uint64_t> shared(words);
        void* together[] = {x.data(), &init, threads.data(), shared.data()};
        {
          std::vector<std::jthread> calls;
          for (std::int64_t t = 0; t < 4; ++t)
            calls.emplace_back([&, t] { fn(together, t * c.tiles / 4, (t + 1) * c.tiles / 4); });
        }
        CHECK(threads == want);
      }
  }
  // A tile that starts before the tile ahead of it has published scans without storing, waits,
  // and then scans again, storing each value with the prefix. Here the ticket starts at tile 1
  // and the test publishes tile 0's prefix (the scratch: ticket, flags, prefixes) while tile 1
  // waits.
  for (bool reverse : {false, true}) {
    INFO((reverse ? "reversed" : "forward") << ", tile 0 published late");
    const std::int64_t n = 100000 + 37, tile = 32768;
    Hlo h;
    hlo::Instruction* scan =
        window_op(h, int32, {n}, hlo::prefix_scan_window({n}, 0, reverse), Opcode::kAdd);
    std::int64_t tiles = kernel_rows(*scan);
    std::vector<std::int32_t> x;
    for (std::int64_t k = 0; k < n; ++k) x.push_back(static_cast<std::int32_t>(k * 5 % 13) - 6);
    std::int32_t init = 7, acc = init, tile0 = 0;
    std::vector<std::int32_t> want(x.size()), got(x.size());
    for (std::int64_t i = 0; i < n; ++i) {
      auto k = static_cast<std::size_t>(reverse ? n - 1 - i : i);
      want[k] = acc += x[k];
      if (i == tile - 1) tile0 = acc;
    }
    std::vector<std::uint64_t> scratch(static_cast<std::size_t>(kernel_scratch_words(*scan)));
    scratch[0] = 1;
    auto code = compile_kernels({{scan, "kernel", /*partitioned=*/true}}, {});
    auto fn = reinterpret_cast<KernelFn>(code->symbol("kernel"));
    void* buffers[] = {x.data(), &init, got.data(), scratch.data()};
    {
      std::jthread call([&] { fn(buffers, 0, tiles); });
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      std::memcpy(&scratch[static_cast<std::size_t>(1 + tiles)], &tile0, sizeof tile0);
      std::atomic_ref<std::uint64_t>(scratch[1]).store(1, std::memory_order_release);
    }
    for (std::int64_t i = tile; i < n; ++i) {
      auto k = static_cast<std::size_t>(reverse ? n - 1 - i : i);
      INFO("scan position " << i);
      REQUIRE(got[k] == want[k]);
    }
  }
  // Floats: the tiles' prefixes chain in one order, so a run on threads gives one call's bits.
  Shape dims{200000};
  Hlo h;
  hlo::Instruction* scan =
      window_op(h, float32, dims, hlo::prefix_scan_window(dims, 0, false), Opcode::kAdd);
  std::vector<float> x = ramp<float>(dims[0], 0, 1e-5), one_call(x.size()), threads(x.size());
  float init = 0.5f;
  auto code = compile_kernels({{scan, "kernel", /*partitioned=*/true}}, {});
  auto fn = reinterpret_cast<KernelFn>(code->symbol("kernel"));
  auto words = static_cast<std::size_t>(kernel_scratch_words(*scan));
  std::vector<std::uint64_t> scratch(words), shared(words);
  void* alone[] = {x.data(), &init, one_call.data(), scratch.data()};
  fn(alone, 0, kernel_rows(*scan));
  void* together[] = {x.data(), &init, threads.data(), shared.data()};
  {
    std::jthread other([&] { fn(together, 3, kernel_rows(*scan)); });
    fn(together, 0, 3);
  }
  CHECK(std::memcmp(one_call.data(), threads.data(), x.size() * sizeof(float)) == 0);
  double sum = init;
  for (std::size_t k = 0; k < x.size(); ++k) {
    sum += x[k];
    INFO("element " << k);
    REQUIRE(std::abs(one_call[k] - sum) <= 1e-5 * sum);
  }
  // Many rows run a row per thread, as do short ones.
  Hlo many, short_rows;
  CHECK(kernel_scratch_words(*window_op(many, float32, {16, 70000},
                                        hlo::prefix_scan_window({16, 70000}, 1, false),
                                        Opcode::kAdd)) == 0);
  CHECK(kernel_scratch_words(*window_op(short_rows, float32, {2, 65535},
                                        hlo::prefix_scan_window({2, 65535}, 1, false),
                                        Opcode::kAdd)) == 0);
}

int kernels(const std::string& thunk_sequence) {
  std::istringstream in(thunk_sequence);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.rfind("kernel ", 0) == 0;
  return n;
}

TEST_CASE("jit: a cumulative reduction is one scan kernel, its producers fused in",
          "[codegen][window][jit]") {
  Array x = np::reshape(np::linspace(-3, 3, 1000).astype(float32), {10, 100});
  auto scan_of_product = [](const Array& a) { return lax::cumsum(a * 2.0f, 1); };
  auto product_of_scan = [](const Array& a) { return lax::cumsum(a, 1) * 2.0f; };
  auto c1 = jit(scan_of_product).lower(x).compile();
  INFO(c1.hlo_text());
  CHECK(kernels(c1.thunk_sequence()) == 1);
  CHECK_THAT(c1.hlo_text(), Catch::Contains("reduce-window"));
  // The scan is no producer: its users read its buffer.
  auto c2 = jit(product_of_scan).lower(x).compile();
  CHECK(kernels(c2.thunk_sequence()) == 2);
  for (auto* f : {+scan_of_product, +product_of_scan}) {
    std::vector<float> got = jit(f)(x).to_vector<float>(), want = f(x).to_vector<float>();
    for (std::size_t k = 0; k < got.size(); ++k)
      CHECK(std::abs(got[k] - want[k]) <= 1e-4f * (1 + std::abs(want[k])));
  }
}

TEST_CASE("jit: long cumulative rows agree with the eager impl", "[codegen][window][jit]") {
  const std::int64_t n = 100003;
  std::vector<std::int32_t> ints;
  for (std::int64_t k = 0; k < n; ++k) ints.push_back(static_cast<std::int32_t>(k % 13) - 6);
  Array xi = np::array(ints);
  for (bool reverse : {false, true}) {
    auto f = [reverse](const Array& a) { return lax::cumsum(a, 0, reverse); };
    CHECK(jit(f)(xi).to_vector<std::int64_t>() == f(xi).to_vector<std::int64_t>());
    auto g = [reverse](const Array& a) { return lax::cummax(a, 0, reverse); };
    CHECK(jit(g)(xi).to_vector<std::int64_t>() == g(xi).to_vector<std::int64_t>());
  }
  // Floats: the vector scan reassociates within blocks of 16; the sums stay within rounding
  // of the sequential ones.
  Array xf = np::sin(np::arange(0, n).astype(float32));
  std::vector<float> got =
      jit([](const Array& a) { return lax::cumsum(a); })(xf).to_vector<float>();
  std::vector<float> want = lax::cumsum(xf).to_vector<float>();
  for (std::size_t k = 0; k < got.size(); k += 97) CHECK(std::abs(got[k] - want[k]) <= 1e-3f);
  // cumlogsumexp, whose combiner is no one opcode, scans in order: bit for bit.
  Array xl = xf * 0.01f;
  CHECK(jit([](const Array& a) { return lax::cumlogsumexp(a); })(xl).to_vector<float>() ==
        lax::cumlogsumexp(xl).to_vector<float>());
}

}  // namespace
}  // namespace jx::codegen::testing
