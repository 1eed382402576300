#include "common/gguf/model_path.h"

#include <algorithm>
#include <filesystem>
#include <vector>

namespace llmserve::common::gguf {

namespace fs = std::filesystem;

StatusOr<std::string> GgufModelFile(const std::string& model) {
  std::error_code ec;
  const fs::file_status status = fs::status(model, ec);
  if (ec || !fs::exists(status)) return Status::NotFound("model '" + model + "' does not exist");
  if (!fs::is_directory(status)) {
    if (fs::path(model).extension() == ".gguf") return model;
    return Status::InvalidArgument("model '" + model + "' is a file but not a .gguf file");
  }
  if (fs::exists(fs::path(model) / "config.json")) return std::string();
  std::vector<std::string> found;
  for (const fs::directory_entry& entry : fs::directory_iterator(model, ec)) {
    if (entry.path().extension() == ".gguf" && entry.is_regular_file()) found.push_back(entry.path().string());
  }
  if (found.size() > 1) {
    std::sort(found.begin(), found.end());
    return Status::InvalidArgument("model directory '" + model + "' holds " + std::to_string(found.size()) +
                                   " .gguf files and no config.json; name the one to serve (" + found[0] + ", ...)");
  }
  return found.empty() ? std::string() : found[0];
}

}  // namespace llmserve::common::gguf
