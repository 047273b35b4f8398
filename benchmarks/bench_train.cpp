// bench_train: one training step of an MLP 784-512-512-10 (relu hidden layers, f32), batch 128,
// softmax cross-entropy with integer labels averaged over the batch, Adam (lr 1e-3, b1 0.9,
// b2 0.999, eps 1e-8), three ways from the same initial parameters and batch: jx (value_and_grad,
// the optimizer update and apply_updates under one jit, parameters and state donated), libtorch
// eager (when installed) and Eigen by hand. The three are first checked to compute the same
// losses, then timed: whole steps interleaved call by call; each framework's steps back to back,
// as in a training loop, the frameworks taking turns; then the steps' pieces. The goals apply to
// the back-to-back steps: interleaved, a step may start while the previous framework's idle
// threads still spin, and after another's work its own data has left the caches.
// Usage: bench_train [repetition scale, default 1] [--jax_ms=step:MS --torch_ms=step:MS: the
// peers' step times from benchmarks/peers.py --cpu]. Exits with an error only when the three
// disagree.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <cblas.h>

#include <Eigen/Core>
#include <jx/jx.hpp>

#include "bench_machine.hpp"
#include "bench_peers.hpp"
#include "bench_stats.hpp"
#include "bench_thunks.hpp"

#if JX_HAVE_TORCH
#include <torch/torch.h>
#endif

namespace np = jx::np;
using jx::Array;

// The MLP's parameters: three Dense layers (w: [in, out], b: [out]).
struct Mlp {
  jx::nn::Dense l1, l2, l3;
};
JX_PYTREE(Mlp, l1, l2, l3)

namespace {

// Written after timed calls so that their results are observably used.
volatile double g_sink = 0;

constexpr int kBatch = 128, kIn = 784, kHidden = 512, kClasses = 10;
constexpr std::array<int, 4> kWidths = {kIn, kHidden, kHidden, kClasses};
constexpr double kLr = 1e-3, kB1 = 0.9, kB2 = 0.999, kEps = 1e-8;
constexpr int kCheckSteps = 5;
constexpr double kLossTolerance = 1e-4;  // relative, between any two of the three
constexpr double kTorchGoal = 1.5, kEigenGoal = 1.0;
constexpr int kRounds = 6;  // turns of each framework in a rotation

using bench::affinity_cpus;
using bench::load_average;
using bench::print_timing;
using bench::sample_interleaved;
using bench::summarize;
using bench::Timing;

// ---- the one draw every framework starts from --------------------------------------------------

struct HostLayer {
  int in, out;
  std::vector<float> w, b;  // w row-major [in, out]
};

struct HostData {
  std::array<HostLayer, 3> layers;
  std::vector<float> x;         // [batch, 784] in [0, 1)
  std::vector<std::int32_t> y;  // [batch] in [0, 10)
};

HostData make_host_data() {
  std::mt19937 gen(20240611);
  auto uniform = [&](std::size_t n, float lo, float hi) {
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(n);
    for (float& e : v) e = d(gen);
    return v;
  };
  HostData h;
  for (std::size_t i = 0; i < 3; ++i) {
    int in = kWidths[i], out = kWidths[i + 1];
    float limit = std::sqrt(6.0f / static_cast<float>(in + out));  // Glorot uniform
    h.layers[i] = {in, out, uniform(std::size_t(in) * out, -limit, limit),
                   uniform(std::size_t(out), -0.1f, 0.1f)};
  }
  h.x = uniform(std::size_t(kBatch) * kIn, 0, 1);
  std::uniform_int_distribution<std::int32_t> label(0, kClasses - 1);
  for (int r = 0; r < kBatch; ++r) h.y.push_back(label(gen));
  return h;
}

// ---- jx ----------------------------------------------------------------------------------------

Array loss(const Mlp& p, const Array& x, const Array& y) {
  Array h = jx::nn::relu(np::matmul(x, p.l1.w) + p.l1.b);
  h = jx::nn::relu(np::matmul(h, p.l2.w) + p.l2.b);
  Array logits = np::matmul(h, p.l3.w) + p.l3.b;
  return np::mean(jx::nn::softmax_cross_entropy(logits, y));
}

using Opt = decltype(jx::optim::adam(1e-3));
using OptState = decltype(std::declval<const Opt&>().init(std::declval<const Mlp&>()));

// The whole step: (params, state, x, y) → (new params, new state, loss before the update).
struct TrainStep {
  Opt opt;
  std::tuple<Mlp, OptState, Array> operator()(const Mlp& p, const OptState& s, const Array& x,
                                              const Array& y) const {
    auto [l, g] = jx::value_and_grad(loss)(p, x, y);
    auto [u, s2] = opt.update(g, s, p);
    return {jx::optim::apply_updates(p, u), std::move(s2), l};
  }
};

// The optimizer's half alone: (grads, state, params) → (new params, new state).
struct AdamApply {
  Opt opt;
  std::pair<Mlp, OptState> operator()(const Mlp& g, const OptState& s, const Mlp& p) const {
    auto [u, s2] = opt.update(g, s, p);
    return {jx::optim::apply_updates(p, u), std::move(s2)};
  }
};

Mlp jx_params(const HostData& h) {
  auto dense = [](const HostLayer& l) {
    return jx::nn::Dense{np::array(l.w, {l.in, l.out}), np::array(l.b, {l.out})};
  };
  return {dense(h.layers[0]), dense(h.layers[1]), dense(h.layers[2])};
}

struct JxCase {
  Opt opt = jx::optim::adam(kLr, kB1, kB2, kEps);
  Mlp params;
  OptState state;
  Array x, y;
  // Parameters and optimizer state are donated: the new ones are written over the old.
  jx::Jitted<TrainStep> step_fn{TrainStep{opt}, {.donate_argnums = {0, 1}, .name = "train_step"}};

  explicit JxCase(const HostData& h)
      : params(jx_params(h)),
        state(opt.init(params)),
        x(np::array(h.x, {kBatch, kIn})),
        y(np::array(h.y, {kBatch})) {}

  double step() {
    auto [p, s, l] = step_fn(params, state, x, y);
    params = std::move(p);
    state = std::move(s);
    return l.item<double>();
  }
};

// ---- Eigen by hand -----------------------------------------------------------------------------

using MatR = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowV = Eigen::Matrix<float, 1, Eigen::Dynamic>;

struct EigenLayer {
  MatR w, gw, mw, vw;  // weights, their gradient, Adam's moments
  RowV b, gb, mb, vb;
};

// p -= lr * (m / bc1) / (sqrt(v / bc2) + eps) after the moments' updates, one chunk per thread:
// Eigen threads only its GEMMs, and the reference gets the threads jx may use.
void adam_update(float* p, float* m, float* v, const float* g, Eigen::Index n, float bc1,
                 float bc2) {
  const int threads = Eigen::nbThreads();
  const float lr = kLr, b1 = kB1, b2 = kB2, eps = kEps;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(static)
#endif
  for (int t = 0; t < threads; ++t) {
    Eigen::Index b = n * t / threads, e = n * (t + 1) / threads;
    Eigen::Map<Eigen::ArrayXf> pa(p + b, e - b), ma(m + b, e - b), va(v + b, e - b);
    Eigen::Map<const Eigen::ArrayXf> ga(g + b, e - b);
    ma = b1 * ma + (1 - b1) * ga;
    va = b2 * va + (1 - b2) * ga.square();
    pa -= lr * (ma / bc1) / ((va / bc2).sqrt() + eps);
  }
}

class EigenCase {
 public:
  explicit EigenCase(const HostData& h) : x_(kBatch, kIn), y_(h.y) {
    for (std::size_t i = 0; i < 3; ++i) {
      const HostLayer& hl = h.layers[i];
      EigenLayer& l = layers_[i];
      l.w = Eigen::Map<const MatR>(hl.w.data(), hl.in, hl.out);
      l.b = Eigen::Map<const RowV>(hl.b.data(), hl.out);
      l.gw = l.mw = l.vw = MatR::Zero(hl.in, hl.out);
      l.gb = l.mb = l.vb = RowV::Zero(hl.out);
    }
    x_ = Eigen::Map<const MatR>(h.x.data(), kBatch, kIn);
    h1_.resize(kBatch, kHidden), h2_.resize(kBatch, kHidden), logits_.resize(kBatch, kClasses);
    dlogits_.resize(kBatch, kClasses), dh2_.resize(kBatch, kHidden), dh1_.resize(kBatch, kHidden);
  }

  // Forward and backward into the gradient buffers; returns the loss.
  double gradient() {
    EigenLayer &l1 = layers_[0], &l2 = layers_[1], &l3 = layers_[2];
    h1_.noalias() = x_ * l1.w;
    h1_.rowwise() += l1.b;
    h1_ = h1_.cwiseMax(0.0f);
    h2_.noalias() = h1_ * l2.w;
    h2_.rowwise() += l2.b;
    h2_ = h2_.cwiseMax(0.0f);
    logits_.noalias() = h2_ * l3.w;
    logits_.rowwise() += l3.b;

    // Softmax cross-entropy: d loss / d logits = (softmax - one_hot) / batch.
    double total = 0;
    for (int r = 0; r < kBatch; ++r) {
      auto row = logits_.row(r).array();
      float m = row.maxCoeff();
      float lse = m + std::log((row - m).exp().sum());
      total += lse - row(y_[static_cast<std::size_t>(r)]);
      dlogits_.row(r) = ((row - lse).exp() / float(kBatch)).matrix();
      dlogits_(r, y_[static_cast<std::size_t>(r)]) -= 1.0f / kBatch;
    }

    l3.gw.noalias() = h2_.transpose() * dlogits_;
    l3.gb = dlogits_.colwise().sum();
    dh2_.noalias() = dlogits_ * l3.w.transpose();
    dh2_.array() = (h2_.array() > 0.0f).select(dh2_.array(), 0.0f);  // relu's mask
    l2.gw.noalias() = h1_.transpose() * dh2_;
    l2.gb = dh2_.colwise().sum();
    dh1_.noalias() = dh2_ * l2.w.transpose();
    dh1_.array() = (h1_.array() > 0.0f).select(dh1_.array(), 0.0f);
    l1.gw.noalias() = x_.transpose() * dh1_;
    l1.gb = dh1_.colwise().sum();
    return total / kBatch;
  }

  void adam() {
    ++count_;
    float bc1 = static_cast<float>(1 - std::pow(kB1, count_));
    float bc2 = static_cast<float>(1 - std::pow(kB2, count_));
    for (EigenLayer& l : layers_) {
      adam_update(l.w.data(), l.mw.data(), l.vw.data(), l.gw.data(), l.w.size(), bc1, bc2);
      adam_update(l.b.data(), l.mb.data(), l.vb.data(), l.gb.data(), l.b.size(), bc1, bc2);
    }
  }

  double step() {
    double l = gradient();
    adam();
    return l;
  }

 private:
  std::array<EigenLayer, 3> layers_;
  MatR x_;
  std::vector<std::int32_t> y_;
  MatR h1_, h2_, logits_, dlogits_, dh2_, dh1_;
  int count_ = 0;
};

// ---- the step's larger GEMMs alone, through OpenBLAS (as libtorch calls it) and Eigen ---------

// Row-major C[m,n] = op(A) op(B), op a transpose where asked, as a GEMM thunk calls sgemm.
struct Gemm {
  bool ta, tb;
  int m, n, k;
  const MatR* a;
  const MatR* b;
  MatR* c;
};

// Six of the step's eight products, all but the two smallest (h2 W3 and h2^T g3): x W1, h1 W2,
// g3 W3^T, h1^T g2, g2 W2^T, x^T g1. jx computes all eight with its own matrix kernels; these
// are what a BLAS library takes for the same work. Operand values do not matter to the time.
class GemmReference {
 public:
  GemmReference() {
    gemms_ = {{false, false, kBatch, kHidden, kIn, &x_, &w1_, &c1_},
              {false, false, kBatch, kHidden, kHidden, &h1_, &w2_, &c2_},
              {false, true, kBatch, kHidden, kClasses, &g3_, &w3_, &c3_},
              {true, false, kHidden, kHidden, kBatch, &h1_, &g2_, &c4_},
              {false, true, kBatch, kHidden, kHidden, &g2_, &w2_, &c5_},
              {true, false, kIn, kHidden, kBatch, &x_, &g2_, &c6_}};
  }
  void openblas() {
    for (const Gemm& g : gemms_)
      cblas_sgemm(CblasRowMajor, g.ta ? CblasTrans : CblasNoTrans, g.tb ? CblasTrans : CblasNoTrans,
                  g.m, g.n, g.k, 1.0f, g.a->data(), g.ta ? g.m : g.k, g.b->data(), g.tb ? g.k : g.n,
                  0.0f, g.c->data(), g.n);
  }
  void eigen() {
    for (const Gemm& g : gemms_) {
      if (g.ta)
        g.c->noalias() = g.a->transpose() * *g.b;
      else if (g.tb)
        g.c->noalias() = *g.a * g.b->transpose();
      else
        g.c->noalias() = *g.a * *g.b;
    }
  }
  float sink() const { return c6_(0, 0); }

 private:
  static MatR random(int rows, int cols) { return MatR::Random(rows, cols); }
  MatR x_ = random(kBatch, kIn), w1_ = random(kIn, kHidden), w2_ = random(kHidden, kHidden);
  MatR w3_ = random(kHidden, kClasses), h1_ = random(kBatch, kHidden);
  MatR g3_ = random(kBatch, kClasses), g2_ = random(kBatch, kHidden);
  MatR c1_ = random(kBatch, kHidden), c2_ = random(kBatch, kHidden), c3_ = random(kBatch, kHidden);
  MatR c4_ = random(kHidden, kHidden), c5_ = random(kBatch, kHidden), c6_ = random(kIn, kHidden);
  std::vector<Gemm> gemms_;
};

// ---- libtorch eager ----------------------------------------------------------------------------

#if JX_HAVE_TORCH
struct TorchMlpImpl : torch::nn::Module {
  TorchMlpImpl()
      : l1(register_module("l1", torch::nn::Linear(kIn, kHidden))),
        l2(register_module("l2", torch::nn::Linear(kHidden, kHidden))),
        l3(register_module("l3", torch::nn::Linear(kHidden, kClasses))) {}
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(l1->forward(x));
    x = torch::relu(l2->forward(x));
    return l3->forward(x);
  }
  torch::nn::Linear l1, l2, l3;
};

class TorchCase {
 public:
  explicit TorchCase(const HostData& h)
      : model_(std::make_shared<TorchMlpImpl>()),
        opt_(model_->parameters(),
             torch::optim::AdamOptions(kLr).betas(std::make_tuple(kB1, kB2)).eps(kEps)) {
    torch::NoGradGuard no_grad;
    torch::nn::Linear* linears[] = {&model_->l1, &model_->l2, &model_->l3};
    for (std::size_t i = 0; i < 3; ++i) {
      const HostLayer& l = h.layers[i];
      // Linear keeps weight as [out, in]: the host's [in, out] transposed.
      auto w = torch::from_blob(const_cast<float*>(l.w.data()), {l.in, l.out}, torch::kFloat32);
      auto b = torch::from_blob(const_cast<float*>(l.b.data()), {l.out}, torch::kFloat32);
      (*linears[i])->weight.copy_(w.t());
      (*linears[i])->bias.copy_(b);
    }
    x_ = torch::from_blob(const_cast<float*>(h.x.data()), {kBatch, kIn}, torch::kFloat32).clone();
    y_ = torch::from_blob(const_cast<std::int32_t*>(h.y.data()), {kBatch}, torch::kInt32)
             .to(torch::kLong);
  }

  // zero_grad, forward, loss, backward; returns the loss.
  double gradient() {
    opt_.zero_grad();
    torch::Tensor l = torch::nn::functional::cross_entropy(model_->forward(x_), y_);
    l.backward();
    return l.item<double>();
  }
  void optimizer_step() { opt_.step(); }
  double step() {
    double l = gradient();
    optimizer_step();
    return l;
  }

 private:
  std::shared_ptr<TorchMlpImpl> model_;
  torch::optim::Adam opt_;
  torch::Tensor x_, y_;
};
#endif

// ---- the report --------------------------------------------------------------------------------

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "bench_train: %s\n", what.c_str());
  std::exit(EXIT_FAILURE);
}

bool eigen_threaded() {
#ifdef _OPENMP
  return true;
#else
  return false;
#endif
}

void print_header(int threads, int scale) {
  std::printf(
      "jx bench_train: one training step, MLP %d-%d-%d-%d (relu), softmax cross-entropy with "
      "integer labels, batch %d, f32, Adam(lr %g, b1 %g, b2 %g, eps %g)\n",
      kIn, kHidden, kHidden, kClasses, kBatch, kLr, kB1, kB2, kEps);
  std::printf("machine: nproc %d, hardware threads %d, %s; load average %s\n", affinity_cpus(),
              bench::hardware_threads(), bench::cpu_model().c_str(), load_average().c_str());
  std::printf("Eigen %d.%d.%d, %d GEMM threads%s; %s (kernels: %s)", EIGEN_WORLD_VERSION,
              EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION, Eigen::nbThreads(),
              eigen_threaded() ? " (OpenMP)" : " (no OpenMP: single-threaded)",
              openblas_get_config(), openblas_get_corename());
#if JX_HAVE_TORCH
  std::printf("; libtorch %s, %d threads", TORCH_VERSION, at::get_num_threads());
#endif
  std::printf("\n");
  if (std::string(openblas_get_corename()) == "Prescott" && __builtin_cpu_supports("avx512f"))
    std::printf(
        "  (OpenBLAS did not recognize this AVX-512 CPU: OPENBLAS_CORETYPE=SkylakeX selects its "
        "AVX-512 kernels)\n");
  std::printf(
      "wall ms per call: median over >= %d calls of each case, interleaved call by call within "
      "each group, >= %.1f s per group (x%d), after a warm-up call of each; %d threads for every "
      "framework\n\n",
      bench::kMinReps, bench::kMinMeasureMs / 1e3, scale, threads);
}

// The three must compute the same thing: the losses of the first steps, from the same start.
struct Stepper {
  const char* name;
  std::function<double()> step;  // one training step; returns the loss before its update
};

void check_losses(const std::vector<Stepper>& cases) {
  std::printf("Correctness (untimed): the loss each step computes, before its update\n  step");
  for (const Stepper& c : cases) std::printf(" %14s", c.name);
  std::printf(" %12s\n", "max rel diff");
  double worst = 0;
  for (int s = 1; s <= kCheckSteps; ++s) {
    std::vector<double> l;
    for (const Stepper& c : cases) l.push_back(c.step());
    auto [lo, hi] = std::minmax_element(l.begin(), l.end());
    double rel = (*hi - *lo) / std::abs(l[0]);
    worst = std::max(worst, rel);
    std::printf("  %4d", s);
    for (double v : l) std::printf(" %14.8f", v);
    std::printf(" %12.2g\n", rel);
  }
  bool ok = worst <= kLossTolerance;
  std::printf("  within %g relative: %s\n\n", kLossTolerance, ok ? "OK" : "WRONG");
  if (!ok) fail("the frameworks' losses differ by more than the tolerance (WRONG)");
}

// The donated leaves (params, then the state) that one step did not take over (left as they
// were, its new value written to a fresh buffer).
std::string leaves_not_taken_over(JxCase& jxc, int* total) {
  std::vector<std::string> names;
  for (const char* group : {"params.", "adam.mu.", "adam.nu."})
    for (const char* leaf : {"l1.w", "l1.b", "l2.w", "l2.b", "l3.w", "l3.b"})
      names.push_back(std::string(group) + leaf);
  names.insert(names.begin() + 6, "adam.count");  // flatten order: params, (count, mu, nu), count
  names.push_back("lr.count");
  std::vector<Array> before = jx::tree::leaves(jxc.params);
  for (const Array& a : jx::tree::leaves(jxc.state)) before.push_back(a);
  if (before.size() != names.size()) fail("unexpected optimizer state structure");
  g_sink = jxc.step();
  *total = static_cast<int>(before.size());
  std::string kept;
  for (std::size_t i = 0; i < before.size(); ++i)
    if (!before[i].is_deleted()) kept += (kept.empty() ? "" : " ") + names[i];
  return kept.empty() ? "none" : kept;
}

void print_program(const char* what, const std::string& thunks) {
  bench::ThunkCounts k = bench::count_thunks(thunks);
  std::printf("  %-44s %8d %6d %7d\n", what, k.kernels, k.gemms, k.others);
}

void print_info(const char* what, double ratio) { std::printf("  %-44s %7.2fx\n", what, ratio); }

struct Case {
  std::string name;
  std::function<void()> call;
};

// Times the cases interleaved call by call and prints them.
std::vector<Timing> time_group(const char* title, const std::vector<Case>& cases, int scale) {
  std::vector<std::function<void()>> calls;
  for (const Case& c : cases) calls.push_back(c.call);
  std::vector<std::vector<double>> samples = sample_interleaved(calls, scale);
  std::printf("%s\n", title);
  std::vector<Timing> out;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    out.push_back(summarize(samples[i]));
    print_timing(cases[i].name.c_str(), out.back());
  }
  return out;
}

// Times groups of cases, a framework's each, the frameworks taking turns (bench::sample_rotating),
// and prints them.
std::vector<std::vector<Timing>> time_rotation(const char* title,
                                               const std::vector<std::vector<Case>>& groups,
                                               int scale) {
  std::vector<std::vector<std::function<void()>>> calls;
  for (const auto& g : groups) {
    calls.emplace_back();
    for (const Case& c : g) calls.back().push_back(c.call);
  }
  std::vector<std::vector<std::vector<double>>> samples =
      bench::sample_rotating(calls, scale, kRounds);
  std::printf("%s (%d turns each, after an untimed call of each case at every turn)\n", title,
              kRounds);
  std::vector<std::vector<Timing>> out(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (std::size_t c = 0; c < groups[g].size(); ++c) {
      out[g].push_back(summarize(samples[g][c]));
      print_timing(groups[g][c].name.c_str(), out[g].back());
    }
  return out;
}

void print_ratio(const char* what, double ratio, double goal) {
  std::printf("  %-44s %7.2fx   goal >= %.1f  %s\n", what, ratio, goal,
              ratio >= goal ? "PASS" : "MISS");
}

}  // namespace

int main(int argc, char** argv) {
  const int scale = bench::repetition_scale(argc, argv);
  const std::vector<bench::PeerTimes> peers = bench::parse_peers(argc, argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // the report so far survives a failure, even piped
  const int threads = std::max(1, affinity_cpus());
  openblas_set_num_threads(threads);
  Eigen::setNbThreads(threads);
#if JX_HAVE_TORCH
  at::set_num_threads(threads);
#endif
  print_header(threads, scale);

  const HostData host = make_host_data();
  JxCase jxc(host);
  EigenCase eig(host);
  std::vector<Stepper> cases = {{"jx", [&] { return jxc.step(); }},
                                {"Eigen", [&] { return eig.step(); }}};
#if JX_HAVE_TORCH
  TorchCase tor(host);
  cases.push_back({"libtorch", [&] { return tor.step(); }});
#endif
  check_losses(cases);

  // ---- jx's programs: the step and its two halves ----
  auto vg_fn = jx::jit(jx::value_and_grad(loss), {.name = "value_and_grad"});
  jx::Jitted<AdamApply> adam_fn{AdamApply{jxc.opt}, {.donate_argnums = {1, 2}, .name = "adam"}};
  jx::Jitted<TrainStep> plain_fn{TrainStep{jxc.opt}, {.name = "train_step_no_donation"}};
  Mlp grads = vg_fn(jxc.params, jxc.x, jxc.y).second;
  std::printf("jx's compiled programs\n  %-44s %8s %6s %7s\n", "thunks", "kernels", "gemms",
              "others");
  print_program("jit(step), donating params and state",
                jxc.step_fn.lower(jxc.params, jxc.state, jxc.x, jxc.y).compile().thunk_sequence());
  print_program("jit(value_and_grad(loss))",
                vg_fn.lower(jxc.params, jxc.x, jxc.y).compile().thunk_sequence());
  print_program("jit(adam update + apply_updates)",
                adam_fn.lower(grads, jxc.state, jxc.params).compile().thunk_sequence());
  int total = 0;
  std::string kept = leaves_not_taken_over(jxc, &total);
  std::printf("  donated params and state (%d buffers); not taken over: %s\n\n", total,
              kept.c_str());

  // ---- whole steps, the three interleaved step by step ----
  // Each step here may start while the previous framework's idle threads still spin on the
  // cores: what running the three in one program costs, not what each costs in its own.
  std::vector<Case> steps = {
      {"jx: jit(value_and_grad + adam + apply_updates)", [&] { g_sink = jxc.step(); }},
      {eigen_threaded() ? "Eigen by hand: forward, backward, Adam"
                        : "Eigen by hand, single-threaded (no OpenMP)",
       [&] { g_sink = eig.step(); }}};
#if JX_HAVE_TORCH
  steps.push_back(
      {"libtorch eager: zero_grad, fwd, loss, bwd, step", [&] { g_sink = tor.step(); }});
#endif
  std::vector<Timing> t = time_group(
      "Whole training steps, the three interleaved call by call (each may inherit the previous "
      "one's spinning threads)",
      steps, scale);
#if !JX_HAVE_TORCH
  std::printf("  libtorch: not installed (its comparison is left out)\n");
#endif
  std::printf("\n");

  // ---- each framework on its own, the frameworks taking turns: steps back to back as in a
  // training loop (the goals), then the steps' pieces ----
  std::vector<std::vector<Case>> step_groups = {{steps[0]}, {steps[1]}};
#if JX_HAVE_TORCH
  step_groups.push_back({steps[2]});
#endif
  std::vector<std::vector<Timing>> alone =
      time_rotation("Whole training steps, each framework's back to back as in a training loop",
                    step_groups, scale);
  std::printf("\n");
  GemmReference gemms;
  Mlp p_piece = jx_params(host);  // its own buffers: jxc's are donated by its steps
  OptState s_piece = jxc.opt.init(p_piece);
  std::vector<std::vector<Case>> piece_groups = {
      {{"jx: jit(step) without donation",
        [&] { g_sink = std::get<2>(plain_fn(p_piece, s_piece, jxc.x, jxc.y)).item<double>(); }},
       {"jx: jit(value_and_grad(loss))",
        [&] { g_sink = vg_fn(p_piece, jxc.x, jxc.y).first.item<double>(); }},
       {"jx: jit(adam + apply_updates), donating",
        [&] {
          auto [p, st] = adam_fn(grads, s_piece, p_piece);
          p_piece = std::move(p), s_piece = std::move(st);
        }},
       {"OpenBLAS: 6 of the step's GEMMs",
        [&] {
          gemms.openblas();
          g_sink = gemms.sink();
        }}},
      {{"Eigen: forward + backward", [&] { g_sink = eig.gradient(); }},
       {"Eigen: Adam", [&] { eig.adam(); }},
       {"Eigen: the same 6 GEMMs", [&] {
          gemms.eigen();
          g_sink = gemms.sink();
        }}}};
#if JX_HAVE_TORCH
  piece_groups.push_back(
      {{"libtorch: zero_grad, forward, loss, backward", [&] { g_sink = tor.gradient(); }},
       {"libtorch: Adam step", [&] { tor.optimizer_step(); }}});
#endif
  time_rotation("The steps' pieces, each framework's interleaved call by call", piece_groups,
                scale);
  // Every step trains on the same batch: how far the timed steps took each.
  std::printf("\nloss after timing: jx %.3g, Eigen %.3g", jxc.step(), eig.step());
#if JX_HAVE_TORCH
  std::printf(", libtorch %.3g", tor.step());
#endif
  std::printf("\n\n");

  std::printf(
      "Ratios: the reference's time / jx's (medians), the goal on the back-to-back steps\n");
  const Timing& jx_step = alone[0][0];
#if JX_HAVE_TORCH
  print_ratio("libtorch / jx", alone[2][0].median_ms / jx_step.median_ms, kTorchGoal);
  print_info("libtorch / jx, best steps", alone[2][0].min_ms / jx_step.min_ms);
  print_info("libtorch / jx, interleaved call by call", t[2].median_ms / t[0].median_ms);
#else
  std::printf("  %-44s %8s   goal >= %.1f  not measured\n", "libtorch / jx", "-", kTorchGoal);
#endif
  print_ratio("Eigen / jx", alone[1][0].median_ms / jx_step.median_ms, kEigenGoal);
  print_info("Eigen / jx, best steps", alone[1][0].min_ms / jx_step.min_ms);
  print_info("Eigen / jx, interleaved call by call", t[1].median_ms / t[0].median_ms);
  bench::print_peers(peers, "step", jx_step.median_ms);
  std::printf("  load average %s\n", load_average().c_str());
  return 0;
}
