#pragma once
// Helpers shared by the worker tests: scratch directories, generated tiny
// models, running the numpy reference, and running our model over a prompt.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "worker/forward_batch.h"
#include "worker/kv_cache.h"
#include "worker/model.h"
#include "worker/test_model.h"

namespace llmserve::worker::testing {

// A fresh directory under $TMPDIR, removed when this goes out of scope.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "llmserve_worker_XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// True when /usr/bin/python3 can import numpy (the references need it).
inline bool HaveNumpy() {
  static const bool ok = std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0;
  return ok;
}

// A tiny spec with a small vocabulary (fast; the tokenizer is not used).
inline TestModelSpec TinySpec(const std::string& arch, uint64_t seed = 1) {
  TestModelSpec s;
  s.arch = arch;
  s.vocab_size = 512;
  s.seed = seed;
  s.std = 0.15;
  s.norm_jitter = 0.2;
  return s;
}

// Runs scripts/ref_forward.py on `tokens` and returns logits [tokens × vocab].
inline std::vector<float> ReferenceLogits(const std::string& model_dir, const std::vector<int32_t>& tokens,
                                          size_t vocab, const std::string& out_path,
                                          const std::string& extra_args = "") {
  std::string list;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (i > 0) list.push_back(',');
    list.append(std::to_string(tokens[i]));
  }
  const std::string cmd = "/usr/bin/python3 scripts/ref_forward.py " + model_dir + " --tokens " + list +
                          " --out " + out_path + (extra_args.empty() ? "" : " " + extra_args);
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::vector<float> out(tokens.size() * vocab);
  std::ifstream in(out_path, std::ios::binary);
  in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(out.size() * 4));
  EXPECT_TRUE(in.good()) << "short reference output " << out_path;
  return out;
}

// max |a - b| / max |b|: the relative error of a logits block.
inline double MaxRelativeError(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < b.size() && i < a.size(); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::abs(static_cast<double>(b[i])));
  }
  return diff / std::max(scale, 1e-30);
}

// config.json of model directory `dir`, edited in place.
inline void EditConfig(const std::string& dir, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json j;
  std::ifstream(dir + "/config.json") >> j;
  edit(j);
  std::ofstream(dir + "/config.json") << j.dump();
}

// The model in `dir` loaded at `precision` with --quantization `quantization`.
inline StatusOr<std::unique_ptr<Model>> LoadModel(const std::string& dir, kernels::cpu::MatmulPrecision precision,
                                                  const std::string& quantization, kernels::cpu::ThreadPool& pool) {
  LoadOptions opts;
  opts.precision = precision;
  opts.quantization = quantization;
  opts.show_progress = false;
  return Model::Load(dir, opts, nullptr, &pool);
}

// Whether that load succeeds (in bf16), and why not.
inline Status LoadStatus(const std::string& dir, const std::string& quantization = "") {
  kernels::cpu::ThreadPool pool(1);
  auto m = LoadModel(dir, kernels::cpu::MatmulPrecision::kBF16, quantization, pool);
  return m.ok() ? Status::Ok() : m.status();
}

inline void ExpectErrorMentions(const Status& st, const std::string& text) {
  EXPECT_FALSE(st.ok()) << "expected an error mentioning " << text;
  EXPECT_NE(st.message().find(text), std::string::npos) << st.ToString();
}

// A prompt of `n` token ids spread over the vocabulary; `salt` varies it.
inline std::vector<int32_t> Prompt(size_t n, size_t vocab, uint32_t salt = 0) {
  std::vector<int32_t> t(n);
  for (size_t i = 0; i < n; ++i) t[i] = static_cast<int32_t>((i * 7919 + salt * 104729 + 13) % vocab);
  return t;
}

// The argmax of each row of logits [rows × vocab]: the greedy tokens.
inline std::vector<size_t> ArgmaxPerRow(const std::vector<float>& logits, size_t vocab) {
  std::vector<size_t> out;
  for (size_t at = 0; at + vocab <= logits.size(); at += vocab)
    out.push_back(static_cast<size_t>(std::max_element(logits.begin() + at, logits.begin() + at + vocab) -
                                      (logits.begin() + at)));
  return out;
}

// `ours` (weights kept quantized, activations quantized on the way in)
// against ref_forward.py computing the same (`q_ref`). Quantizing an
// activation is a step function: numpy's BLAS sums in another order than we
// do, and a last-bit difference can move one activation across a rounding
// boundary of its step (seen with Zen 4's OpenBLAS: 4e-3 on one GPTQ case,
// 3e-7 with its Haswell kernels). So the bound is a quarter of the gap
// between the reference's two modes (`plain_ref`: activations unquantized),
// which a wrong scale, zero point or nibble order far exceeds.
inline void ExpectMatchesQuantizedReference(const std::string& label, const std::vector<float>& ours,
                                            const std::vector<float>& q_ref, const std::vector<float>& plain_ref,
                                            size_t vocab) {
  const double err = MaxRelativeError(ours, q_ref);
  const double mode_gap = MaxRelativeError(plain_ref, q_ref);
  std::printf("%s: max relative error %.3g vs numpy with quantized activations, %.3g between the numpy modes\n",
              label.c_str(), err, mode_gap);
  EXPECT_LE(err, std::max(1e-4, mode_gap / 4)) << label;
  EXPECT_EQ(ArgmaxPerRow(ours, vocab), ArgmaxPerRow(q_ref, vocab)) << label;
}

// Runs one request's `tokens` through `model` in chunks of the given sizes
// (cycled), blocks 0.. of `cache` in order, with LoRA adapter `lora_slot`
// (-1: none), and returns logits for every position.
inline std::vector<float> RunPrompt(Model& model, KvCache& cache, const std::vector<int32_t>& tokens,
                                    const std::vector<size_t>& chunks, const std::vector<int32_t>& blocks,
                                    int32_t lora_slot = -1) {
  const size_t vocab = model.config().vocab_size;
  std::vector<float> all;
  size_t done = 0, ci = 0;
  while (done < tokens.size()) {
    const size_t n = std::min(chunks[ci++ % chunks.size()], tokens.size() - done);
    ForwardBatch b;
    std::vector<int32_t> chunk(tokens.begin() + done, tokens.begin() + done + n);
    b.AddRequest(chunk, static_cast<int32_t>(done), blocks, cache.shape().block_size, false, lora_slot);
    for (size_t i = 0; i < n; ++i) b.logits_indices.push_back(static_cast<int32_t>(i));
    b.FinishBlockTables();
    std::vector<float> logits;
    Status st = model.Forward(b, cache, &logits);
    EXPECT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(logits.size(), n * vocab);
    all.insert(all.end(), logits.begin(), logits.end());
    done += n;
  }
  return all;
}

// Block ids [first, first + count).
inline std::vector<int32_t> Blocks(int32_t first, int32_t count) {
  std::vector<int32_t> b(count);
  for (int32_t i = 0; i < count; ++i) b[i] = first + i;
  return b;
}

}  // namespace llmserve::worker::testing
