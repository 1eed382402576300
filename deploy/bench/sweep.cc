#include "deploy/bench/sweep.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "deploy/bench/bench_args.h"
#include "deploy/bench/serve_bench.h"
#include "deploy/bench/serve_options.h"

namespace llmserve::deploy::bench {
namespace {

namespace fs = std::filesystem;

constexpr char kUsage[] =
    "llmserve bench sweep --base-url URL [--base-url URL2 ...] --request-rates 1,2,4,inf [flags]\n"
    "Runs `llmserve bench serve` once per request rate against each server (one after the other),\n"
    "saves every run's JSON and a summary (sweep.json) in --output-dir, and draws p50/p99 TTFT and ITL\n"
    "against output tokens/s as a PNG with gnuplot, one colour per server. Per-server --model and\n"
    "--labels may be given as comma-separated lists in --base-url order. Every `bench serve` flag applies.\n"
    "Example (us against a vLLM server):\n"
    "  llmserve bench sweep --base-url http://127.0.0.1:8000 --base-url http://127.0.0.1:8001 \\\n"
    "      --labels llmserve,vllm --model tiny --tokenizer MODEL_DIR --request-rates 1,4,16,inf \\\n"
    "      --random-input-len 128 --random-output-len 32 --num-prompts 100 --output-dir sweep-out";

std::vector<ArgSpec> SweepArgSpecs() {
  std::vector<ArgSpec> specs = ServeBenchArgSpecs();
  for (auto& s : specs) {
    if (s.name == "base-url") {
      s.kind = ArgSpec::Kind::kList;
      s.help = "server base URL; repeat (or comma-separate) to compare servers";
    }
    if (s.name == "model") s.help = "model name, or one per --base-url, comma-separated";
  }
  specs.push_back({"request-rates", ArgSpec::Kind::kValue, "1,2,4,inf", "comma-separated request rates to run"});
  specs.push_back({"labels", ArgSpec::Kind::kValue, "", "comma-separated server labels (default host:port)"});
  specs.push_back({"output-dir", ArgSpec::Kind::kValue, "bench-sweep", "directory for JSON results and the PNG"});
  specs.push_back({"plot", ArgSpec::Kind::kValue, "", "PNG path (default OUTPUT_DIR/sweep.png)"});
  return specs;
}

std::string Sanitize(std::string s) {
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  }
  return s;
}

std::string RateName(double r) {
  if (std::isinf(r)) return "inf";
  char b[32];
  std::snprintf(b, sizeof(b), "%g", r);
  return b;
}

// Quotes for a gnuplot single-quoted string.
std::string GnuQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

double Value(const nlohmann::json& j, const std::string& key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

int RunGnuplot(const std::string& script_path) {
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    execlp("gnuplot", "gnuplot", script_path.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

std::string SweepGnuplotScript(const std::vector<std::string>& labels, const std::vector<std::string>& data_files,
                               const std::string& png_path) {
  std::string s;
  s += "set terminal pngcairo size 1400,560 font ',10'\n";
  s += "set output " + GnuQuote(png_path) + "\n";
  s += "set datafile separator '\\t'\nset grid\nset key top left\nset xlabel 'Output throughput (tok/s)'\n";
  s += "set multiplot layout 1,2 title 'Latency vs throughput (solid p50, dashed p99; point labels: request rate)'\n";
  for (int panel = 0; panel < 2; ++panel) {
    const int p50_col = panel == 0 ? 4 : 6;
    s += std::string("set title '") + (panel == 0 ? "Time to first token" : "Inter-token latency") + "'\n";
    s += std::string("set ylabel '") + (panel == 0 ? "TTFT (ms)" : "ITL (ms)") + "'\n";
    s += "plot ";
    for (size_t i = 0; i < labels.size(); ++i) {
      const std::string f = GnuQuote(data_files[i]);
      const std::string lc = " lc " + std::to_string(i + 1);
      if (i) s += ", \\\n     ";
      s += f + " using 3:" + std::to_string(p50_col) + " with linespoints dt 1 pt 7" + lc + " title " +
           GnuQuote(labels[i] + " p50") + ", ";
      s += f + " using 3:" + std::to_string(p50_col + 1) + " with linespoints dt 2 pt 5" + lc + " title " +
           GnuQuote(labels[i] + " p99") + ", ";
      s += f + " using 3:" + std::to_string(p50_col + 1) + ":1 with labels offset 0,1 font ',8' notitle";
    }
    s += "\n";
  }
  s += "unset multiplot\n";
  return s;
}

namespace {

// The servers and rates a sweep runs, from its flags.
struct SweepPlan {
  std::vector<std::string> urls;
  std::vector<std::string> models;  // empty, one for all servers, or one per server
  std::vector<std::string> labels;  // one per server
  std::vector<double> rates;
};

StatusOr<SweepPlan> PlanSweep(const ArgParser& args, const ServeBenchOptions& base) {
  SweepPlan plan;
  for (const auto& u : args.List("base-url")) {
    for (const auto& part : SplitComma(u)) plan.urls.push_back(part);
  }
  if (plan.urls.empty()) plan.urls.push_back(base.base_url);
  plan.models = SplitComma(args.Get("model"));
  if (plan.models.size() > 1 && plan.models.size() != plan.urls.size()) {
    return Status::InvalidArgument("--model lists " + std::to_string(plan.models.size()) + " names for " +
                                   std::to_string(plan.urls.size()) + " servers");
  }
  plan.labels = SplitComma(args.Get("labels"));
  if (!plan.labels.empty() && plan.labels.size() != plan.urls.size()) {
    return Status::InvalidArgument("--labels needs one label per --base-url");
  }
  if (plan.labels.empty()) {
    for (const auto& u : plan.urls) plan.labels.push_back(u.rfind("http://", 0) == 0 ? u.substr(7) : u);
  }
  for (const auto& r : SplitComma(args.Get("request-rates"))) {
    char* end = nullptr;
    const double v = r == "inf" ? HUGE_VAL : std::strtod(r.c_str(), &end);
    if ((r != "inf" && *end != '\0') || !(v > 0)) {
      return Status::InvalidArgument("--request-rates: '" + r + "' is not a positive rate");
    }
    plan.rates.push_back(v);
  }
  if (plan.rates.empty()) return Status::InvalidArgument("--request-rates is empty");
  return plan;
}

// The serve-benchmark options of server `s` at `rate`: saved quietly into dir,
// reporting at least the p50 / p99 TTFT and ITL the plot needs.
ServeBenchOptions PointOptions(const ServeBenchOptions& base, const SweepPlan& plan, size_t s, double rate,
                               const fs::path& dir) {
  ServeBenchOptions o = base;
  o.base_url = plan.urls[s];
  o.model = plan.models.empty() ? "" : plan.models.size() == 1 ? plan.models[0] : plan.models[s];
  o.request_rate = rate;
  o.quiet = true;
  o.save_result = true;
  o.result_dir = dir.string();
  o.result_filename = Sanitize(plan.labels[s]) + "-" + RateName(rate) + "qps.json";
  o.label = plan.labels[s];
  for (const char* m : {"ttft", "itl"}) {
    if (std::find(o.percentile_metrics.begin(), o.percentile_metrics.end(), m) == o.percentile_metrics.end()) {
      o.percentile_metrics.push_back(m);
    }
  }
  for (double p : {50.0, 99.0}) {
    if (std::find(o.metric_percentiles.begin(), o.metric_percentiles.end(), p) == o.metric_percentiles.end()) {
      o.metric_percentiles.push_back(p);
    }
  }
  return o;
}

// Runs one point of the sweep: prints its line, appends its row to tsv, and
// returns its entry of sweep.json.
StatusOr<nlohmann::json> RunSweepPoint(const ServeBenchOptions& o, std::ofstream& tsv) {
  const double rate = o.request_rate;
  std::cout << "sweep: " << o.label << " at " << RateName(rate) << " req/s ..." << std::flush;
  auto r = RunServeBenchmark(o);
  if (!r.ok()) {
    return Status(r.status().code(), o.label + " at " + RateName(rate) + " req/s: " + r.status().message());
  }
  const nlohmann::json& j = r->json;
  char line[256];
  std::snprintf(line, sizeof(line),
                " %ld ok, %ld failed, %.1f tok/s, TTFT p50 %.1f p99 %.1f ms, ITL p50 %.1f p99 %.1f ms\n",
                static_cast<long>(r->metrics.completed), static_cast<long>(r->metrics.failed),
                Value(j, "output_throughput"), Value(j, "p50_ttft_ms"), Value(j, "p99_ttft_ms"),
                Value(j, "p50_itl_ms"), Value(j, "p99_itl_ms"));
  std::cout << line;
  tsv << RateName(rate) << '\t' << Value(j, "request_throughput") << '\t' << Value(j, "output_throughput") << '\t'
      << Value(j, "p50_ttft_ms") << '\t' << Value(j, "p99_ttft_ms") << '\t' << Value(j, "p50_itl_ms") << '\t'
      << Value(j, "p99_itl_ms") << '\n';
  return nlohmann::json{{"label", o.label},
                        {"base_url", o.base_url},
                        {"request_rate", std::isinf(rate) ? nlohmann::json("inf") : nlohmann::json(rate)},
                        {"result_file", r->saved_path},
                        {"completed", j["completed"]},
                        {"failed", j["failed"]},
                        {"request_throughput", j["request_throughput"]},
                        {"output_throughput", j["output_throughput"]},
                        {"p50_ttft_ms", Value(j, "p50_ttft_ms")},
                        {"p99_ttft_ms", Value(j, "p99_ttft_ms")},
                        {"p50_itl_ms", Value(j, "p50_itl_ms")},
                        {"p99_itl_ms", Value(j, "p99_itl_ms")}};
}

}  // namespace

int RunBenchSweepCommand(int argc, char** argv) {
  ArgParser args(kUsage, SweepArgSpecs());
  auto fail = [](const std::string& m, int code) {
    std::cerr << "llmserve bench sweep: " << m << "\n";
    return code;
  };
  if (Status s = args.Parse(argc, argv); !s.ok()) return fail(s.message(), 2);
  if (args.help_requested()) {
    std::cout << args.Help();
    return 0;
  }
  auto base = ServeBenchOptionsFromArgs(args);
  if (!base.ok()) return fail(base.status().message(), 2);
  auto plan = PlanSweep(args, *base);
  if (!plan.ok()) return fail(plan.status().message(), 2);
  const fs::path dir = args.Get("output-dir");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return fail("cannot create --output-dir '" + dir.string() + "': " + ec.message(), 1);

  nlohmann::json summary = nlohmann::json::array();
  std::vector<std::string> data_files;
  for (size_t s = 0; s < plan->urls.size(); ++s) {
    const fs::path data = dir / (Sanitize(plan->labels[s]) + ".tsv");
    std::ofstream tsv(data);
    tsv << "# rate\trequest_throughput\toutput_throughput\tp50_ttft_ms\tp99_ttft_ms\tp50_itl_ms\tp99_itl_ms\n";
    for (double rate : plan->rates) {
      auto row = RunSweepPoint(PointOptions(*base, *plan, s, rate, dir), tsv);
      if (!row.ok()) return fail(row.status().message(), 1);
      summary.push_back(*std::move(row));
    }
    if (!tsv) return fail("cannot write '" + data.string() + "'", 1);
    data_files.push_back(data.string());
  }
  std::ofstream(dir / "sweep.json") << summary.dump(2) << "\n";
  const std::string png = args.Get("plot").empty() ? (dir / "sweep.png").string() : args.Get("plot");
  const fs::path script = dir / "sweep.gnuplot";
  std::ofstream(script) << SweepGnuplotScript(plan->labels, data_files, png);
  const int rc = RunGnuplot(script.string());
  if (rc != 0) {
    return fail("gnuplot failed (exit " + std::to_string(rc) + ") on " + script.string() +
                    (rc == 127 ? ": gnuplot is not installed (Debian: apt-get install gnuplot-nox)" : ""),
                1);
  }
  std::cout << "sweep: results in " << dir.string() << ", plot " << png << "\n";
  return 0;
}

}  // namespace llmserve::deploy::bench
