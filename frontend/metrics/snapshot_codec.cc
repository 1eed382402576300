#include "frontend/metrics/snapshot_codec.h"

#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

namespace llmserve::frontend::metrics {

namespace {

using nlohmann::json;

constexpr int kFormatVersion = 1;

// JSON has no NaN or infinities: those go as strings.
json EncodeDouble(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return v;
}

bool DecodeDouble(const json& j, double* out) {
  if (j.is_number()) return *out = j.get<double>(), true;
  if (!j.is_string()) return false;
  const auto& s = j.get_ref<const std::string&>();
  if (s == "NaN") return *out = std::numeric_limits<double>::quiet_NaN(), true;
  if (s == "+Inf") return *out = std::numeric_limits<double>::infinity(), true;
  if (s == "-Inf") return *out = -std::numeric_limits<double>::infinity(), true;
  return false;
}

const char* MergeName(GaugeMerge merge) {
  switch (merge) {
    case GaugeMerge::kFreshest: return "freshest";
    case GaugeMerge::kLocal: return "local";
    case GaugeMerge::kMax: return "max";
  }
  return "freshest";
}

bool ParseType(const std::string& s, MetricType* out) {
  for (MetricType t : {MetricType::kCounter, MetricType::kGauge, MetricType::kHistogram})
    if (s == MetricTypeName(t)) return *out = t, true;
  return false;
}

bool ParseMerge(const std::string& s, GaugeMerge* out) {
  for (GaugeMerge m : {GaugeMerge::kFreshest, GaugeMerge::kLocal, GaugeMerge::kMax})
    if (s == MergeName(m)) return *out = m, true;
  return false;
}

bool IsStringArray(const json& j) {
  if (!j.is_array()) return false;
  for (const json& e : j)
    if (!e.is_string()) return false;
  return true;
}

json EncodeSeries(const FamilySnapshot& f, const SeriesSnapshot& s) {
  json j = {{"labels", s.label_values}};
  if (f.type == MetricType::kHistogram) {
    j["cumulative"] = s.cumulative;
    j["sum"] = EncodeDouble(s.sum);
  } else {
    j["value"] = EncodeDouble(s.value);
  }
  if (f.type == MetricType::kGauge) j["stamp"] = {s.stamp.sequence, EncodeDouble(s.stamp.wall_s)};
  return j;
}

Status DecodeSeries(const json& j, const FamilySnapshot& f, SeriesSnapshot* s) {
  const Status bad = Status::InvalidArgument("metrics snapshot: bad series of " + f.name);
  if (!j.is_object() || !IsStringArray(j.value("labels", json())) || j["labels"].size() != f.label_names.size())
    return bad;
  s->label_values = j["labels"].get<std::vector<std::string>>();
  if (f.type == MetricType::kHistogram) {
    const json& c = j.value("cumulative", json());
    if (!c.is_array() || c.size() != f.bounds.size() + 1 || !DecodeDouble(j.value("sum", json()), &s->sum))
      return bad;
    for (const json& n : c) {
      if (!n.is_number_unsigned()) return bad;
      s->cumulative.push_back(n.get<uint64_t>());
    }
    return Status::Ok();
  }
  if (!DecodeDouble(j.value("value", json()), &s->value)) return bad;
  if (f.type == MetricType::kGauge) {
    const json& stamp = j.value("stamp", json());
    if (!stamp.is_array() || stamp.size() != 2 || !stamp[0].is_number_integer() ||
        !DecodeDouble(stamp[1], &s->stamp.wall_s))
      return bad;
    s->stamp.sequence = stamp[0].get<int64_t>();
  }
  return Status::Ok();
}

Status DecodeFamily(const json& j, FamilySnapshot* f) {
  const Status bad = Status::InvalidArgument("metrics snapshot: bad family");
  if (!j.is_object() || !j.value("name", json()).is_string() || !j.value("help", json()).is_string() ||
      !j.value("type", json()).is_string() || !IsStringArray(j.value("labels", json())) ||
      !j.value("series", json()).is_array())
    return bad;
  f->name = j["name"].get<std::string>();
  f->help = j["help"].get<std::string>();
  f->label_names = j["labels"].get<std::vector<std::string>>();
  if (!ParseType(j["type"].get<std::string>(), &f->type)) return bad;
  if (f->type == MetricType::kGauge &&
      !(j.value("merge", json()).is_string() && ParseMerge(j["merge"].get<std::string>(), &f->merge)))
    return bad;
  if (f->type == MetricType::kHistogram) {
    const json& bounds = j.value("bounds", json());
    if (!bounds.is_array()) return bad;
    for (const json& b : bounds) {
      if (!b.is_number()) return bad;
      f->bounds.push_back(b.get<double>());
    }
  }
  for (const json& s : j["series"]) {
    f->series.emplace_back();
    LLMSERVE_RETURN_IF_ERROR(DecodeSeries(s, *f, &f->series.back()));
  }
  return Status::Ok();
}

}  // namespace

std::string EncodeSnapshot(const SnapshotOwner& owner, const std::vector<FamilySnapshot>& families) {
  json fs = json::array();
  for (const FamilySnapshot& f : families) {
    json j = {{"name", f.name}, {"help", f.help}, {"type", MetricTypeName(f.type)}, {"labels", f.label_names}};
    if (f.type == MetricType::kGauge) j["merge"] = MergeName(f.merge);
    if (f.type == MetricType::kHistogram) j["bounds"] = f.bounds;
    json series = json::array();
    for (const SeriesSnapshot& s : f.series) series.push_back(EncodeSeries(f, s));
    j["series"] = std::move(series);
    fs.push_back(std::move(j));
  }
  const json doc = {{"format", kFormatVersion},
                    {"pid", owner.pid},
                    {"start_ticks", owner.start_ticks},
                    {"families", std::move(fs)}};
  // Label values are the servers' own strings; replace anything that is not UTF-8 rather than throw.
  return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

StatusOr<DecodedSnapshot> DecodeSnapshot(const std::string& text) {
  const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || doc.value("format", json()) != kFormatVersion ||
      !doc.value("pid", json()).is_number_integer() || !doc.value("start_ticks", json()).is_number_unsigned() ||
      !doc.value("families", json()).is_array())
    return Status::InvalidArgument("not a metrics snapshot (format " + std::to_string(kFormatVersion) + ")");
  DecodedSnapshot out;
  out.owner.pid = doc["pid"].get<int64_t>();
  out.owner.start_ticks = doc["start_ticks"].get<uint64_t>();
  for (const json& f : doc["families"]) {
    out.families.emplace_back();
    LLMSERVE_RETURN_IF_ERROR(DecodeFamily(f, &out.families.back()));
  }
  return out;
}

}  // namespace llmserve::frontend::metrics
