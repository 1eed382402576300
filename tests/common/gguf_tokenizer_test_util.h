#pragma once
// Helpers for the GGUF tokenizer tests: a scratch directory and GGUF files
// written from a real Hugging Face tokenizer or from hand-set metadata.

#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "common/gguf/gguf_writer.h"
#include "common/tokenizer/gguf_tokenizer_writer.h"

namespace llmserve::common::tokenizer::testing {

// A fresh directory under the system temp directory, removed at destruction.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() /
              (name + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string File(const std::string& name) const { return (path_ / name).string(); }
  std::string path() const { return path_.string(); }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

// Writes `writer` plus one tiny tensor to `path`.
inline void WriteGgufOrFail(gguf::GgufWriter* writer, const std::string& path) {
  ASSERT_TRUE(writer->Add("dummy.weight", {4}, gguf::GgmlType::kF32, {0.f, 1.f, 2.f, 3.f}).ok());
  const Status s = writer->WriteFile(path);
  ASSERT_TRUE(s.ok()) << s.ToString();
}

}  // namespace llmserve::common::tokenizer::testing
