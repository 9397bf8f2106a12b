// bench/table.cpp — `dblock_bench table PUBLISHED.json [OTHER.json ...]`: the results table of
// docs/performance.md, in Markdown, from the bench.json files of one or more runs.
//
// The first file is the published run (value, floor, ratio, spread, target); the ratios of the
// same metric in the other files go to the last column, so a reader sees at once how stable a
// figure is across runs of the same code on the same machine. Nothing here measures anything.
#include "bench.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace dblock_bench {
namespace {

std::string database_name(const std::string& backend) {
  if (backend == "pqxx_postgresql") return "PostgreSQL";
  if (backend == "mysql_mariadb") return "MariaDB";
  if (backend == "soci_sqlite") return "SQLite";
  return backend;
}

// Three significant digits, thousands separated: 71.4, 1101, 101,798.
std::string number(double v) {
  if (!std::isfinite(v)) return "–";
  char buf[64];
  const double a = std::fabs(v);
  if (a >= 1000) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
    std::string s = buf, out;
    const std::size_t digits = s.size() - (s[0] == '-' ? 1 : 0);
    for (std::size_t i = 0; i < s.size(); ++i) {
      out += s[i];
      const std::size_t left = s.size() - i - 1;
      if (s[i] != '-' && left > 0 && left % 3 == 0 && digits > 4) out += ',';
    }
    return out;
  }
  std::snprintf(buf, sizeof buf, a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : "%.3g", v);
  return buf;
}

std::string ratio_text(double v) {
  if (!std::isfinite(v)) return "–";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

double field(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : NAN;
}

const nlohmann::json* find_result(const nlohmann::json& doc, const std::string& metric, const std::string& backend) {
  for (const auto& r : doc["results"])
    if (r.value("metric", "") == metric && r.value("backend", "") == backend) return &r;
  return nullptr;
}

}  // namespace

int table_main(int argc, char** argv) {
  std::vector<std::string> files;
  CLI::App app{"dblock_bench table — the Markdown results table of docs/performance.md from bench.json files"};
  app.add_option("files", files, "bench.json of the published run first, then other runs")->required()->check(
      CLI::ExistingFile);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 64;
  }
  std::vector<nlohmann::json> docs;
  for (const auto& f : files) {
    std::ifstream in(f);
    try {
      docs.push_back(nlohmann::json::parse(in));
    } catch (const nlohmann::json::exception& e) {
      std::cerr << "dblock_bench table: " << f << " is not a bench.json: " << e.what() << '\n';
      return 65;
    }
    if (!docs.back().contains("results") || !docs.back()["results"].is_array()) {
      std::cerr << "dblock_bench table: " << f << " has no \"results\" array\n";
      return 65;
    }
  }
  auto& out = std::cout;
  out << "| metric | database | value | unit | floor | ratio | spread | target |"
      << (docs.size() > 1 ? " other runs (ratio) |" : "") << '\n'
      << "|---|---|---|---|---|---|---|---|" << (docs.size() > 1 ? "---|" : "") << '\n';
  for (const auto& r : docs.front()["results"]) {
    const std::string metric = r.value("metric", ""), backend = r.value("backend", "");
    std::string spread = "–";
    if (r.contains("ratio_spread") && r["ratio_spread"].is_object())
      spread = ratio_text(field(r["ratio_spread"], "p25")) + "–" + ratio_text(field(r["ratio_spread"], "p75"));
    std::string target;
    if (r.contains("target") && r["target"].is_string()) {
      const bool met = r.contains("met") && r["met"].is_boolean() && r["met"].get<bool>();
      target = std::string(met ? "**met**: " : "**missed**: ") + r["target"].get<std::string>();
    }
    out << "| `" << metric << "` | " << database_name(backend) << " | " << number(field(r, "value")) << " | "
        << r.value("unit", "") << " | " << number(field(r, "floor")) << " | " << ratio_text(field(r, "ratio"))
        << " | " << spread << " | " << target << " |";
    if (docs.size() > 1) {
      std::string others;
      for (std::size_t i = 1; i < docs.size(); ++i) {
        const nlohmann::json* o = find_result(docs[i], metric, backend);
        others += (i > 1 ? ", " : "") + (o ? ratio_text(field(*o, "ratio")) : std::string("–"));
      }
      out << ' ' << others << " |";
    }
    out << '\n';
  }
  return 0;
}

}  // namespace dblock_bench
