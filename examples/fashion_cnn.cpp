// Fashion-MNIST with a small CNN, NHWC: conv 3x3 (32) → relu → max_pool 2 → conv 3x3 (64) →
// relu → max_pool 2 → dense 128 → relu → dense 10, trained with Adam. The whole train step
// (value_and_grad of the loss, the optimizer update) is one jitted function, called once per
// mini-batch; one progress line per epoch: loss, train and test accuracy, examples per second,
// compile time and cache hits. Images stay uint8 on the host and are normalized inside the step.
// --train_limit and --test_limit train and evaluate on the first N images (a smoke run).
//
// Usage: fashion_cnn [--epochs=3] [--batch_size=128] [--lr=0.001] [--seed=0]
//                    [--train_limit=N] [--test_limit=N] [--data=/usr/share/datasets/fashion-mnist]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#include <jx/jx.hpp>

namespace np = jx::np;
namespace nn = jx::nn;
using jx::Array;

struct Cnn {
  nn::Conv conv1, conv2;
  nn::Dense hidden, out;
};
JX_PYTREE(Cnn, conv1, conv2, hidden, out)

namespace {

struct Flags {
  int epochs = 3, batch_size = 128;
  double lr = 1e-3;
  std::uint64_t seed = 0;
  std::int64_t train_limit = 0, test_limit = 0;  // 0: every image
  std::string data = "/usr/share/datasets/fashion-mnist";
};

Flags parse_flags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const std::string& name) -> const char* {
      return a.rfind(name + "=", 0) == 0 ? a.c_str() + name.size() + 1 : nullptr;
    };
    if (const char* v = value("--epochs"))
      f.epochs = std::atoi(v);
    else if (const char* v = value("--batch_size"))
      f.batch_size = std::atoi(v);
    else if (const char* v = value("--lr"))
      f.lr = std::atof(v);
    else if (const char* v = value("--seed"))
      f.seed = std::strtoull(v, nullptr, 10);
    else if (const char* v = value("--train_limit"))
      f.train_limit = std::atoll(v);
    else if (const char* v = value("--test_limit"))
      f.test_limit = std::atoll(v);
    else if (const char* v = value("--data"))
      f.data = v;
    else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      std::exit(2);
    }
  }
  return f;
}

// uint8 pixels [batch, 784] to [0, 1] images [batch, 28, 28, 1], then the network's logits.
Array logits(const Cnn& p, const Array& pixels) {
  Array x = np::reshape(pixels.astype(jx::float32) / 255.0, {pixels.shape()[0], 28, 28, 1});
  x = nn::max_pool(nn::relu(nn::conv(p.conv1, x)), {2, 2}, {2, 2});  // 14 x 14 x 32
  x = nn::max_pool(nn::relu(nn::conv(p.conv2, x)), {2, 2}, {2, 2});  // 7 x 7 x 64
  x = np::reshape(x, {x.shape()[0], 7 * 7 * 64});
  x = nn::relu(np::matmul(x, p.hidden.w) + p.hidden.b);
  return np::matmul(x, p.out.w) + p.out.b;
}

Array loss(const Cnn& p, const Array& pixels, const Array& labels) {
  return np::mean(nn::softmax_cross_entropy(logits(p, pixels), labels));
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The first `limit` rows (all when limit is 0 or past the end).
Array first_rows(const Array& x, std::int64_t limit) {
  std::int64_t n = x.shape()[0];
  if (limit <= 0 || limit >= n) return x;
  std::vector<std::int64_t> rows(static_cast<std::size_t>(limit));
  std::iota(rows.begin(), rows.end(), 0);
  return jx::data::take_rows(x, rows);
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags = parse_flags(argc, argv);
  jx::data::FashionMnist ds = jx::data::load_fashion_mnist(flags.data, jx::data::Pixels::kUint8);
  Array train_images = first_rows(ds.train_images, flags.train_limit);
  Array train_labels = first_rows(ds.train_labels, flags.train_limit);
  Array test_images = first_rows(ds.test_images, flags.test_limit);
  Array test_labels = first_rows(ds.test_labels, flags.test_limit);
  const std::int64_t n_train = train_images.shape()[0];

  auto [init_key, data_key] = jx::random::split<2>(jx::random::key(flags.seed));
  auto keys = jx::random::split<4>(init_key);
  // flax's defaults: lecun_normal kernels, zero biases.
  Cnn params{nn::conv_init(keys[0], 1, 32, {3, 3}), nn::conv_init(keys[1], 32, 64, {3, 3}),
             nn::dense_init(keys[2], 7 * 7 * 64, 128, nn::Init::lecun_normal),
             nn::dense_init(keys[3], 128, 10, nn::Init::lecun_normal)};
  auto opt = jx::optim::adam(flags.lr);
  auto state = opt.init(params);

  // The whole step under one jit; params and optimizer state are donated, so their buffers
  // are reused for the new ones.
  auto train_step = jx::jit(
      [&opt](const Cnn& p, const decltype(state)& s, const Array& x, const Array& y) {
        auto [value, grads] = jx::value_and_grad(loss)(p, x, y);
        auto [updates, new_state] = opt.update(grads, s, p);
        return std::tuple{jx::optim::apply_updates(p, updates), new_state, value};
      },
      {.donate_argnums = {0, 1}, .name = "train_step"});
  auto correct = jx::jit(
      [](const Cnn& p, const Array& x, const Array& y) {
        return np::sum((np::argmax(logits(p, x), -1) == y).astype(jx::int32));
      },
      {.name = "correct"});
  // Accuracy over a split, in batches of up to 1000 (one compiled shape; a remainder is left
  // out).
  auto accuracy = [&](const Array& images, const Array& labels) {
    const std::int64_t n = images.shape()[0], batch = std::min<std::int64_t>(1000, n);
    std::int64_t hits = 0;
    std::vector<std::int64_t> rows(static_cast<std::size_t>(batch));
    for (std::int64_t start = 0; start + batch <= n; start += batch) {
      std::iota(rows.begin(), rows.end(), start);
      hits += correct(params, jx::data::take_rows(images, rows), jx::data::take_rows(labels, rows))
                  .item<std::int32_t>();
    }
    return 100.0 * static_cast<double>(hits) / static_cast<double>(n - n % batch);
  };

  std::printf(
      "Fashion-MNIST: %lld train / %lld test images; CNN conv32-pool-conv64-pool-128-10 "
      "(NHWC), Adam lr %g, batch %d\n",
      static_cast<long long>(n_train), static_cast<long long>(test_images.shape()[0]), flags.lr,
      flags.batch_size);
  auto start = std::chrono::steady_clock::now();
  const std::int64_t batches = n_train / flags.batch_size;
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
      std::tie(params, state, loss_value) =
          train_step(params, state, jx::data::take_rows(train_images, rows),
                     jx::data::take_rows(train_labels, rows));
      loss_sum += loss_value.item<float>();
    }
    double train_s = seconds_since(t0);
    double train_acc = accuracy(train_images, train_labels);
    double test_acc = accuracy(test_images, test_labels);
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
