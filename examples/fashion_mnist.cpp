// Fashion-MNIST with an MLP 784-512-512-10, trained with Adam (the learning rate on a cosine
// decay): the whole train step
// (value_and_grad of the loss, the optimizer update) is one jitted function, called once per
// mini-batch. One progress line per epoch: loss, train and test accuracy, examples per second,
// compile time and cache hits. Images stay uint8 on the host and are normalized inside the step.
// With --bf16 the model computes in bfloat16 on float32 master weights (optim::MixedPrecision).
//
// Usage: fashion_mnist [--epochs=5] [--batch_size=128] [--lr=0.001] [--seed=0] [--bf16]
//                      [--data=/usr/share/datasets/fashion-mnist]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <jx/jx.hpp>

namespace np = jx::np;
namespace nn = jx::nn;
using jx::Array;

struct Mlp {
  nn::Dense hidden1, hidden2, out;
};
JX_PYTREE(Mlp, hidden1, hidden2, out)

namespace {

struct Flags {
  int epochs = 5, batch_size = 128;
  double lr = 1e-3;
  std::uint64_t seed = 0;
  bool bf16 = false;
  std::string data = "/usr/share/datasets/fashion-mnist";
};

Flags parse_flags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const std::string& name) -> const char* {
      return a.rfind(name + "=", 0) == 0 ? a.c_str() + name.size() + 1 : nullptr;
    };
    if (const char* v = value("--epochs")) f.epochs = std::atoi(v);
    else if (const char* v = value("--batch_size")) f.batch_size = std::atoi(v);
    else if (const char* v = value("--lr")) f.lr = std::atof(v);
    else if (const char* v = value("--seed")) f.seed = std::strtoull(v, nullptr, 10);
    else if (const char* v = value("--data")) f.data = v;
    else if (a == "--bf16") f.bf16 = true;
    else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      std::exit(2);
    }
  }
  return f;
}

Array layer(const nn::Dense& d, const Array& x) { return np::matmul(x, d.w) + d.b; }

// uint8 pixels to [0, 1], in the dtype the model computes in.
Array logits(const Mlp& p, const Array& pixels) {
  Array x = pixels.astype(p.out.w.dtype()) / 255.0;
  Array h = nn::relu(layer(p.hidden1, x));
  h = nn::relu(layer(p.hidden2, h));
  return layer(p.out, h);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags = parse_flags(argc, argv);
  jx::data::FashionMnist ds = jx::data::load_fashion_mnist(flags.data, jx::data::Pixels::kUint8);
  const std::int64_t n_train = ds.train_images.shape()[0];

  auto [init_key, data_key] = jx::random::split<2>(jx::random::key(flags.seed));
  auto keys = jx::random::split<3>(init_key);
  Mlp params{nn::dense_init(keys[0], 784, 512, nn::Init::he_normal),
             nn::dense_init(keys[1], 512, 512, nn::Init::he_normal),
             nn::dense_init(keys[2], 512, 10)};
  // Adam with the learning rate decayed along a cosine to 0 over the whole run.
  const std::int64_t batches = n_train / flags.batch_size;
  auto opt = jx::optim::adam(
      jx::optim::cosine_decay_schedule(flags.lr, static_cast<int>(batches * flags.epochs)));
  auto state = opt.init(params);
  // float32 throughout, or bfloat16 compute on float32 master weights.
  const jx::optim::MixedPrecision policy{.compute_dtype = flags.bf16 ? jx::bfloat16 : jx::float32};
  auto loss = [policy](const Mlp& p, const Array& x, const Array& y) {
    Array z = policy.cast_to_output(logits(policy.cast_to_compute(p), x));
    return np::mean(nn::softmax_cross_entropy(z, y));
  };

  // The whole step under one jit; params and optimizer state are donated, so their buffers
  // are reused for the new ones.
  auto train_step = jx::jit(
      [&opt, &loss](const Mlp& p, const decltype(state)& s, const Array& x, const Array& y) {
        auto [value, grads] = jx::value_and_grad(loss)(p, x, y);
        auto [updates, new_state] = opt.update(grads, s, p);
        return std::tuple{jx::optim::apply_updates(p, updates), new_state, value};
      },
      {.donate_argnums = {0, 1}, .name = "train_step"});
  auto correct = jx::jit(
      [policy](const Mlp& p, const Array& x, const Array& y) {
        Array z = logits(policy.cast_to_compute(p), x);
        return np::sum((np::argmax(z, -1) == y).astype(jx::int32));
      },
      {.name = "correct"});
  // Accuracy over a whole split, in batches of 1000 (one compiled shape).
  auto accuracy = [&](const Array& images, const Array& labels) {
    std::int64_t n = images.shape()[0], hits = 0;
    std::vector<std::int64_t> rows(1000);
    for (std::int64_t start = 0; start + 1000 <= n; start += 1000) {
      for (std::int64_t i = 0; i < 1000; ++i) rows[static_cast<std::size_t>(i)] = start + i;
      hits += correct(params, jx::data::take_rows(images, rows), jx::data::take_rows(labels, rows))
                  .item<std::int32_t>();
    }
    return 100.0 * static_cast<double>(hits) / static_cast<double>(n - n % 1000);
  };

  std::printf("Fashion-MNIST: %lld train / %lld test images; MLP 784-512-512-10, Adam lr %g "
              "(cosine decay), batch %d, %s\n",
              static_cast<long long>(n_train), static_cast<long long>(ds.test_images.shape()[0]),
              flags.lr, flags.batch_size,
              flags.bf16 ? "bfloat16 compute on float32 weights" : "float32");
  auto start = std::chrono::steady_clock::now();
  std::vector<std::int64_t> rows(static_cast<std::size_t>(flags.batch_size));
  for (int epoch = 1; epoch <= flags.epochs; ++epoch) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::int32_t> order =
        jx::random::permutation(jx::random::fold_in(data_key, static_cast<std::uint32_t>(epoch)),
                                n_train)
            .to_vector<std::int32_t>();
    double loss_sum = 0;
    for (std::int64_t b = 0; b < batches; ++b) {
      for (std::size_t i = 0; i < rows.size(); ++i)
        rows[i] = order[static_cast<std::size_t>(b * flags.batch_size) + i];
      Array loss_value;
      std::tie(params, state, loss_value) = train_step(
          params, state, jx::data::take_rows(ds.train_images, rows),
          jx::data::take_rows(ds.train_labels, rows));
      loss_sum += loss_value.item<float>();
    }
    double train_s = seconds_since(t0);
    double train_acc = accuracy(ds.train_images, ds.train_labels);
    double test_acc = accuracy(ds.test_images, ds.test_labels);
    jx::CacheInfo info = train_step.cache_info();
    double compile_ms = info.trace_ms + info.lower_ms + info.optimize_ms + info.codegen_ms;
    std::printf(
        "epoch %d: loss %.4f  train acc %.2f%%  test acc %.2f%%  %.0f examples/s  "
        "(train_step: compiled %lld time(s) in %.0f ms, %lld cache hits)\n",
        epoch, loss_sum / static_cast<double>(batches), train_acc, test_acc,
        static_cast<double>(batches * flags.batch_size) / train_s,
        static_cast<long long>(info.compiles), compile_ms, static_cast<long long>(info.hits));
    std::fflush(stdout);
  }
  std::printf("total %.1f s\n", seconds_since(start));
  return 0;
}
