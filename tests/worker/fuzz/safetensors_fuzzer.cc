// libFuzzer target over the safetensors reader (worker/safetensors.h): byte
// 0 picks the file the rest becomes, model.safetensors (even) or
// model.safetensors.index.json beside a valid shard (odd); the checkpoint is
// then opened from a scratch directory. Asserts: every tensor accepted has
// a byte size (shape × dtype, without overflow) equal to its byte range, and
// that range lies inside the mapped file; every byte of it can be read.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "worker/safetensors.h"
#include "worker/safetensors_writer.h"
#include "tests/fuzz_require.h"

namespace llmserve::worker::safetensors_fuzz {

namespace fs = std::filesystem;

using llmserve::testing::FuzzRequire;

// A scratch directory (in memory where /dev/shm exists) holding a valid
// shard, shard.safetensors, for the index to name.
const std::string& ScratchDir() {
  static const std::string* dir = [] {
    const fs::path base = fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    auto* d = new std::string((base / ("llmserve-safetensors-fuzz-" + std::to_string(::getpid()))).string());
    fs::create_directories(*d);
    TensorToWrite t;
    t.name = "w";
    t.shape = {2, 3};
    t.dtype = "F32";
    t.fill = [](uint8_t* out) { std::memset(out, 0, 6 * sizeof(float)); };
    FuzzRequire(WriteSafetensorsFile(*d + "/shard.safetensors", {t}).ok(), "cannot write the shard");
    std::atexit([] { fs::remove_all(ScratchDir()); });
    return d;
  }();
  return *dir;
}

void CheckTensor(const TensorView& t, const uint8_t* begin, const uint8_t* end) {
  size_t bytes = t.element_size();
  for (size_t d : t.shape) FuzzRequire(!__builtin_mul_overflow(bytes, d, &bytes), "tensor size overflows");
  const auto* data = static_cast<const uint8_t*>(t.data);
  FuzzRequire(bytes == 0 || (data >= begin && data <= end && bytes <= static_cast<size_t>(end - data)),
              "tensor bytes outside the file");
  volatile uint8_t sum = 0;
  for (size_t i = 0; i < bytes; ++i) sum = static_cast<uint8_t>(sum + data[i]);
}

}  // namespace llmserve::worker::safetensors_fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace f = llmserve::worker::safetensors_fuzz;
  namespace fs = std::filesystem;
  using llmserve::worker::Checkpoint;
  if (size < 1) return 0;
  const std::string& dir = f::ScratchDir();
  const bool index = data[0] & 1;
  const std::string single = dir + "/model.safetensors", index_path = dir + "/model.safetensors.index.json";
  fs::remove(single);
  fs::remove(index_path);
  {
    std::ofstream out(index ? index_path : single, std::ios::binary);
    out.write(reinterpret_cast<const char*>(data) + 1, static_cast<std::streamsize>(size - 1));
  }
  if (!index) {
    auto file = llmserve::worker::SafetensorsFile::Open(single);
    if (file.ok()) {
      const uint8_t* begin = (*file)->mapped().data();
      for (const auto& [name, t] : (*file)->tensors()) f::CheckTensor(t, begin, begin + (*file)->mapped().size());
    }
  }
  auto ckpt = Checkpoint::Open(dir);
  if (!ckpt.ok()) return 0;
  for (const std::string& name : (*ckpt)->TensorNames()) {
    f::FuzzRequire((*ckpt)->Find(name) != nullptr, "a listed tensor is not found");
  }
  return 0;
}
