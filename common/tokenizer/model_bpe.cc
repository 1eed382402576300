#include "common/tokenizer/model_bpe.h"

#include <algorithm>
#include <cstdio>
#include <queue>

#include <nlohmann/json.hpp>

#include "base/utf8.h"

namespace llmserve::common::tokenizer {

using nlohmann::json;

namespace {
constexpr size_t kCacheShards = 64;
constexpr size_t kCacheEntriesPerShard = 2048;
constexpr size_t kMaxCachedPieceBytes = 256;
constexpr size_t kLinearScanMaxSymbols = 24;

uint64_t PairKey(int32_t a, int32_t b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}
}  // namespace

// One symbol of a word being merged: a token id, the byte length of its text,
// and links to its live neighbours (-1 at the ends).
struct BpeModel::Symbol {
  int32_t id;
  int32_t prev;
  int32_t next;
  uint32_t len;  // 0 once merged into its left neighbour
};

// Open-addressing hash table (linear probing) from a pair of ids to the
// merge's rank and the id of the merged token.
struct BpeModel::PairTable {
  struct Slot {
    uint64_t key = kEmpty;
    int32_t rank = 0;
    int32_t merged = 0;
  };
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  std::vector<Slot> slots;
  uint64_t mask = 0;

  explicit PairTable(size_t n) {
    size_t cap = 16;
    while (cap < n * 2) cap <<= 1;
    slots.resize(cap);
    mask = cap - 1;
  }
  static uint64_t Hash(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return k;
  }
  // Inserts unless present (the first, lowest-ranked merge of a pair wins).
  void Insert(uint64_t key, int32_t rank, int32_t merged) {
    for (uint64_t i = Hash(key) & mask;; i = (i + 1) & mask) {
      if (slots[i].key == key) return;
      if (slots[i].key == kEmpty) {
        slots[i] = {key, rank, merged};
        return;
      }
    }
  }
  const Slot* Find(uint64_t key) const {
    for (uint64_t i = Hash(key) & mask;; i = (i + 1) & mask) {
      if (slots[i].key == key) return &slots[i];
      if (slots[i].key == kEmpty) return nullptr;
    }
  }
};

// A shard of the piece -> ids cache: a direct-mapped table (a colliding
// piece replaces the old entry), guarded by one mutex.
struct BpeModel::CacheShard {
  struct Entry {
    uint64_t hash = 0;
    std::string piece;
    std::vector<int32_t> ids;
  };
  std::mutex mu;
  std::vector<Entry> entries = std::vector<Entry>(kCacheEntriesPerShard);
};
BpeModel::~BpeModel() = default;

StatusOr<std::unique_ptr<BpeModel>> BpeModel::FromJson(const json& model, const JsonContext& ctx) {
  std::unique_ptr<BpeModel> m(new BpeModel());
  LLMSERVE_RETURN_IF_ERROR(m->ReadOptions(model, ctx));
  LLMSERVE_RETURN_IF_ERROR(m->ReadVocab(model, ctx));
  LLMSERVE_RETURN_IF_ERROR(m->ReadMerges(model, ctx));
  m->cache_.reset(new CacheShard[kCacheShards]);
  return m;
}

Status BpeModel::ReadOptions(const json& model, const JsonContext& ctx) {
  std::string type = "BPE";
  LLMSERVE_RETURN_IF_ERROR(GetString(model, "type", ctx, false, &type));
  if (type != "BPE") return ctx.Child("type").Error("unsupported model type \"" + type + "\" (only BPE)");
  LLMSERVE_RETURN_IF_ERROR(GetBool(model, "byte_fallback", ctx, false, &byte_fallback_));
  LLMSERVE_RETURN_IF_ERROR(GetBool(model, "fuse_unk", ctx, false, &fuse_unk_));
  LLMSERVE_RETURN_IF_ERROR(GetBool(model, "ignore_merges", ctx, false, &ignore_merges_));
  LLMSERVE_RETURN_IF_ERROR(GetString(model, "continuing_subword_prefix", ctx, false, &continuing_subword_prefix_));
  LLMSERVE_RETURN_IF_ERROR(GetString(model, "end_of_word_suffix", ctx, false, &end_of_word_suffix_));
  auto dropout = model.find("dropout");
  if (dropout != model.end() && !dropout->is_null() && !(dropout->is_number() && dropout->get<double>() == 0)) {
    return ctx.Child("dropout").Error("BPE dropout is not supported for inference");
  }
  return Status::Ok();
}

Status BpeModel::ReadVocab(const json& model, const JsonContext& ctx) {
  auto vocab = model.find("vocab");
  if (vocab == model.end() || !vocab->is_object()) {
    return ctx.Child("vocab").Error("expected an object mapping tokens to ids");
  }
  token_to_id_.reserve(vocab->size());
  int32_t max_id = -1;
  for (auto it = vocab->begin(); it != vocab->end(); ++it) {
    if (!it->is_number_integer() || it->get<long long>() < 0 || it->get<long long>() > INT32_MAX) {
      return ctx.Child("vocab").Error("token \"" + it.key() + "\" has an invalid id (" +
                                      JsonTypeName(*it) + ")");
    }
    const auto id = static_cast<int32_t>(it->get<long long>());
    token_to_id_.emplace(it.key(), id);
    max_id = std::max(max_id, id);
  }
  id_to_token_.assign(static_cast<size_t>(max_id + 1), nullptr);
  for (const auto& [tok, id] : token_to_id_) id_to_token_[id] = &tok;

  std::string unk;
  LLMSERVE_RETURN_IF_ERROR(GetString(model, "unk_token", ctx, false, &unk));
  if (!unk.empty()) {
    auto it = token_to_id_.find(unk);
    if (it == token_to_id_.end()) {
      return ctx.Child("unk_token").Error("unk_token \"" + unk + "\" is not in the vocabulary");
    }
    unk_id_ = it->second;
  }
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    auto it = token_to_id_.find(std::string_view(name));
    byte_ids_[b] = it == token_to_id_.end() ? -1 : it->second;
  }
  if (continuing_subword_prefix_.empty() && end_of_word_suffix_.empty()) {
    bmp_char_id_.assign(0x10000, -1);
    for (const auto& [tok, id] : token_to_id_) {
      size_t pos = 0;
      char32_t cp;
      if (!tok.empty() && base::DecodeUtf8(tok, &pos, &cp) && pos == tok.size() && cp < 0x10000) {
        bmp_char_id_[cp] = id;
      }
    }
  }
  return Status::Ok();
}

Status BpeModel::ReadMerges(const json& model, const JsonContext& ctx) {
  auto merges = model.find("merges");
  if (merges == model.end() || !merges->is_array()) {
    return ctx.Child("merges").Error("expected an array of merges");
  }
  merges_ = std::make_unique<PairTable>(merges->size());
  const JsonContext mctx = ctx.Child("merges");
  const size_t prefix_len = continuing_subword_prefix_.size();
  std::string merged;
  for (size_t i = 0; i < merges->size(); ++i) {
    const json& item = (*merges)[i];
    std::string_view a, b;
    if (item.is_string()) {
      const std::string_view s = item.get_ref<const std::string&>();
      const size_t space = s.find(' ');
      if (space == std::string::npos) {
        return mctx.Child(i).Error("merge \"" + std::string(s) + "\" has no space");
      }
      a = s.substr(0, space);
      b = s.substr(space + 1);
    } else if (item.is_array() && item.size() == 2 && item[0].is_string() && item[1].is_string()) {
      a = item[0].get_ref<const std::string&>();
      b = item[1].get_ref<const std::string&>();
    } else {
      return mctx.Child(i).Error("expected \"a b\" or [\"a\", \"b\"], found " + JsonTypeName(item));
    }
    auto ia = token_to_id_.find(a), ib = token_to_id_.find(b);
    if (ia == token_to_id_.end() || ib == token_to_id_.end()) {
      return mctx.Child(i).Error("merge token \"" + std::string(ia == token_to_id_.end() ? a : b) +
                                 "\" is not in the vocabulary");
    }
    merged.assign(a);
    if (prefix_len > 0 && b.substr(0, prefix_len) == continuing_subword_prefix_) {
      merged.append(b.substr(prefix_len));
    } else {
      merged.append(b);
    }
    auto im = token_to_id_.find(merged);
    if (im == token_to_id_.end()) {
      return mctx.Child(i).Error("merged token \"" + merged + "\" is not in the vocabulary");
    }
    merges_->Insert(PairKey(ia->second, ib->second), static_cast<int32_t>(i), im->second);
  }
  return Status::Ok();
}

void BpeModel::ClearCache() const {
  for (size_t i = 0; i < kCacheShards; ++i) {
    std::lock_guard<std::mutex> lock(cache_[i].mu);
    for (auto& e : cache_[i].entries) {
      e.hash = 0;
      e.piece.clear();
    }
  }
}

std::optional<int32_t> BpeModel::TokenToId(std::string_view token) const {
  auto it = token_to_id_.find(token);
  if (it == token_to_id_.end()) return std::nullopt;
  return it->second;
}

const std::string* BpeModel::IdToToken(int32_t id) const {
  if (id < 0 || id >= id_limit()) return nullptr;
  return id_to_token_[id];
}

int32_t BpeModel::CharId(std::string_view ch, bool first, bool last) const {
  if (!bmp_char_id_.empty()) {
    size_t pos = 0;
    char32_t cp;
    if (base::DecodeUtf8(ch, &pos, &cp) && cp < 0x10000) return bmp_char_id_[cp];
    auto it = token_to_id_.find(ch);
    return it == token_to_id_.end() ? -1 : it->second;
  }
  std::string tok;
  if (!first) tok += continuing_subword_prefix_;
  tok += ch;
  if (last) tok += end_of_word_suffix_;
  auto it = token_to_id_.find(tok);
  return it == token_to_id_.end() ? -1 : it->second;
}

void BpeModel::MergeSymbols(std::vector<Symbol>* symbols) const {
  auto& sym = *symbols;
  const auto n = static_cast<int32_t>(sym.size());
  if (n < 2) return;
  if (static_cast<size_t>(n) <= kLinearScanMaxSymbols) {
    // Short word: rescan for the best pair after every merge.
    while (true) {
      int32_t best = -1, best_rank = INT32_MAX, best_merged = 0;
      for (int32_t i = 0; i != -1 && sym[i].next != -1; i = sym[i].next) {
        const PairTable::Slot* s = merges_->Find(PairKey(sym[i].id, sym[sym[i].next].id));
        if (s != nullptr && s->rank < best_rank) {
          best = i;
          best_rank = s->rank;
          best_merged = s->merged;
        }
      }
      if (best < 0) return;
      const int32_t right = sym[best].next;
      sym[best].id = best_merged;
      sym[best].len += sym[right].len;
      sym[best].next = sym[right].next;
      if (sym[right].next != -1) sym[sym[right].next].prev = best;
      sym[right].len = 0;
    }
  }
  // Long word: a heap of (rank, left position, right id) candidates.
  struct Candidate {
    int32_t rank, left, right_id, left_id, merged;
    bool operator>(const Candidate& o) const {
      return rank != o.rank ? rank > o.rank : left > o.left;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
  auto push = [&](int32_t i) {
    if (i < 0 || sym[i].next < 0) return;
    const int32_t j = sym[i].next;
    if (const PairTable::Slot* s = merges_->Find(PairKey(sym[i].id, sym[j].id))) {
      heap.push({s->rank, i, sym[j].id, sym[i].id, s->merged});
    }
  };
  for (int32_t i = 0; i + 1 < n; ++i) push(i);
  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    const int32_t i = c.left;
    if (sym[i].len == 0 || sym[i].id != c.left_id || sym[i].next < 0) continue;
    const int32_t right = sym[i].next;
    if (sym[right].id != c.right_id) continue;
    sym[i].id = c.merged;
    sym[i].len += sym[right].len;
    sym[i].next = sym[right].next;
    if (sym[right].next != -1) sym[sym[right].next].prev = i;
    sym[right].len = 0;
    push(sym[i].prev);
    push(i);
  }
}

void BpeModel::TokenizeUncached(std::string_view piece, std::vector<int32_t>* ids) const {
  std::vector<Symbol> sym;
  sym.reserve(piece.size());
  size_t pos = 0;
  bool last_was_unk = false;
  auto add = [&](int32_t id, uint32_t len) {
    const auto idx = static_cast<int32_t>(sym.size());
    sym.push_back({id, idx - 1, -1, len});
    if (idx > 0) sym[idx - 1].next = idx;
  };
  while (pos < piece.size()) {
    const size_t start = pos;
    char32_t cp;
    base::DecodeUtf8(piece, &pos, &cp);
    const std::string_view ch = piece.substr(start, pos - start);
    const int32_t id = CharId(ch, start == 0, pos == piece.size());
    if (id >= 0) {
      add(id, static_cast<uint32_t>(ch.size()));
      last_was_unk = false;
      continue;
    }
    if (byte_fallback_) {
      bool all = true;
      for (unsigned char b : ch) all = all && byte_ids_[b] >= 0;
      if (all) {
        for (unsigned char b : ch) add(byte_ids_[b], 1);
        last_was_unk = false;
        continue;
      }
    }
    if (!unk_id_) continue;  // no unknown token: the character is dropped, as in HF
    if (fuse_unk_ && last_was_unk) {
      sym.back().len += static_cast<uint32_t>(ch.size());
    } else {
      add(*unk_id_, static_cast<uint32_t>(ch.size()));
    }
    last_was_unk = true;
  }
  MergeSymbols(&sym);
  for (int32_t i = sym.empty() ? -1 : 0; i != -1; i = sym[i].next) ids->push_back(sym[i].id);
}

void BpeModel::Tokenize(std::string_view piece, std::vector<int32_t>* ids) const {
  if (piece.empty()) return;
  if (ignore_merges_) {
    auto it = token_to_id_.find(piece);
    if (it != token_to_id_.end()) {
      ids->push_back(it->second);
      return;
    }
  }
  if (piece.size() >= kMaxCachedPieceBytes) {
    TokenizeUncached(piece, ids);
    return;
  }
  const uint64_t hash = std::hash<std::string_view>()(piece);
  CacheShard& shard = cache_[hash % kCacheShards];
  CacheShard::Entry& entry = shard.entries[(hash / kCacheShards) % kCacheEntriesPerShard];
  {
    std::lock_guard<std::mutex> lock(shard.mu);
    if (entry.hash == hash && entry.piece == piece) {
      ids->insert(ids->end(), entry.ids.begin(), entry.ids.end());
      return;
    }
  }
  const size_t before = ids->size();
  TokenizeUncached(piece, ids);
  std::lock_guard<std::mutex> lock(shard.mu);
  entry.hash = hash;
  entry.piece.assign(piece);
  entry.ids.assign(ids->begin() + static_cast<std::ptrdiff_t>(before), ids->end());
}

}  // namespace llmserve::common::tokenizer
