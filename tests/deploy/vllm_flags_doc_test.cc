// docs/vllm-serve-flags.md and the tables in deploy/vllm_flags.h must agree:
// every "accepted, no effect" and "rejected" row of the doc is in the code
// with the same reason, and the other way round; every "implemented" row is
// a flag this binary defines (the launcher links the same flag files).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "deploy/serve_arguments.h"
#include "deploy/vllm_flags.h"

namespace llmserve::deploy::vllm_flags_doc_test {

struct DocRow {
  std::string status;
  std::string why;
};

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// The table rows "| `--name` ... | status | why |", by name without dashes.
std::map<std::string, DocRow> ReadDocTable() {
  std::ifstream doc(std::string(LLMSERVE_SOURCE_DIR) + "/docs/vllm-serve-flags.md");
  EXPECT_TRUE(doc.good()) << "docs/vllm-serve-flags.md is missing";
  std::map<std::string, DocRow> rows;
  std::string line;
  while (std::getline(doc, line)) {
    if (!line.starts_with("| `-")) continue;
    std::vector<std::string> cells;
    for (size_t start = 1, bar; (bar = line.find(" |", start)) != std::string::npos; start = bar + 2)
      cells.push_back(Trim(line.substr(start, bar - start)));
    EXPECT_EQ(cells.size(), 3u) << line;
    if (cells.size() != 3) continue;
    std::string name = cells[0].substr(1, cells[0].find('`', 1) - 1);
    name.erase(0, name.find_first_not_of('-'));
    EXPECT_TRUE(rows.emplace(name, DocRow{cells[1], cells[2]}).second) << "two rows for " << name;
  }
  return rows;
}

TEST(VllmFlagsDoc, DocAndTablesAgree) {
  const auto rows = ReadDocTable();
  ASSERT_GT(rows.size(), 150u);
  size_t no_effect = 0, rejected = 0;
  for (const auto& [name, row] : rows) {
    if (row.status == "accepted, no effect") ++no_effect;
    if (row.status == "rejected: not implemented yet") ++rejected;
  }
  EXPECT_EQ(no_effect, NoEffectVllmFlags().size());
  EXPECT_EQ(rejected, RejectedVllmFlags().size());
  for (const auto& flag : NoEffectVllmFlags()) {
    auto it = rows.find(std::string(flag.name));
    ASSERT_NE(it, rows.end()) << "--" << flag.name << " is not in docs/vllm-serve-flags.md";
    EXPECT_EQ(it->second.status, "accepted, no effect") << flag.name;
    EXPECT_EQ(it->second.why, flag.reason) << flag.name;
    EXPECT_FALSE(GflagsIsOurs(std::string(flag.name))) << "--" << flag.name << " is ours now: drop its row";
  }
  for (const auto& flag : RejectedVllmFlags()) {
    auto it = rows.find(std::string(flag.name));
    ASSERT_NE(it, rows.end()) << "--" << flag.name << " is not in docs/vllm-serve-flags.md";
    EXPECT_EQ(it->second.status, "rejected: not implemented yet") << flag.name;
    EXPECT_EQ(it->second.why, DescribeRejected(flag)) << flag.name;
    EXPECT_FALSE(GflagsIsOurs(std::string(flag.name))) << "--" << flag.name << " is ours now: drop its row";
  }
}

TEST(VllmFlagsDoc, ImplementedRowsAreOurFlags) {
  std::map<std::string, std::string> renamed;
  for (const auto& alias : VllmFlagAliases())
    if (!alias.short_form) renamed[std::string(alias.spelling)] = alias.canonical;
  for (const auto& [name, row] : ReadDocTable()) {
    if (!row.status.starts_with("implemented")) continue;
    if (name == "config" || name == "model") continue;  // taken before gflags parses (deploy/serve_arguments.h)
    const auto it = renamed.find(name);
    EXPECT_TRUE(GflagsIsOurs(it == renamed.end() ? name : it->second)) << "--" << name << " is not an llmserve flag";
  }
}

}  // namespace llmserve::deploy::vllm_flags_doc_test
