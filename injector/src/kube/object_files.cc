// Objects and configuration files read from disk (object_files.h).

#include "harness/injector/object_files.h"

#include <fstream>
#include <sstream>

#include "harness/core/yaml.h"
#include "watched_file.h"

namespace harness::injector {

namespace fs = std::filesystem;

std::vector<nlohmann::json> flattenLists(std::vector<nlohmann::json> documents) {
  std::vector<nlohmann::json> out;
  for (auto& doc : documents) {
    const bool is_list = doc.is_object() && doc.contains("items") && doc["items"].is_array() &&
                         doc.value("kind", "").ends_with("List");
    if (is_list) {
      for (auto& item : doc["items"]) out.push_back(std::move(item));
    } else {
      out.push_back(std::move(doc));
    }
  }
  return out;
}

core::Result<std::vector<nlohmann::json>> loadObjectFiles(const std::vector<fs::path>& files) {
  std::vector<nlohmann::json> all;
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return core::makeError("cannot read " + file.string());
    std::ostringstream ss;
    ss << in.rdbuf();
    auto docs = core::parseYamlDocuments(ss.str());
    if (!docs) return docs.error().within(file.string());
    for (auto& d : flattenLists(std::move(*docs))) all.push_back(std::move(d));
  }
  return all;
}

core::Result<istio::InjectorSettings> loadIstioSettings(const IstioWebhookConfig& c) {
  auto ct = readFileText(c.config_file);
  if (!ct) return ct.error();
  auto vt = readFileText(c.values_file);
  if (!vt) return vt.error();
  auto mt = readFileText(c.mesh_file);
  if (!mt) return mt.error();
  return istio::loadSettings(*ct, *vt, *mt);
}

}  // namespace harness::injector
