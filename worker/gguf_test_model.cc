#include "worker/gguf_test_model.h"

#include <filesystem>
#include <system_error>

#include "worker/gguf_export.h"

namespace llmserve::worker {

namespace fs = std::filesystem;

Status WriteGgufTestModel(const TestModelSpec& spec, const GgufWeightTypes& types, const std::string& out_dir) {
  const fs::path out(out_dir);
  const fs::path staging = out / ".hf-staging";
  std::error_code ec;
  fs::remove_all(staging, ec);
  LLMSERVE_RETURN_IF_ERROR(WriteTestModel(spec, staging.string()));
  Status st = ExportGguf(staging.string(), types, (out / "model.gguf").string());
  // model.gguf carries the tokenizer metadata too; the HF files beside it
  // make tests load the tokenizer from tokenizer.json, which is faster than
  // rebuilding it from the GGUF vocabulary (tests/common/gguf_tokenizer_test.cc
  // shows the two are the same).
  for (const char* name : {"tokenizer.json", "tokenizer_config.json"}) {
    if (!st.ok()) break;
    if (!fs::exists(staging / name)) continue;
    fs::copy_file(staging / name, out / name, fs::copy_options::overwrite_existing, ec);
    if (ec) st = Status::Internal((out / name).string() + ": " + ec.message());
  }
  fs::remove_all(staging, ec);
  return st;
}

}  // namespace llmserve::worker
