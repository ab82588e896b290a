// matchConditions through kube-cel: create-time compilation and per-request evaluation.

#include <stdexcept>

#include <fmt/format.h>

#include "harness/sim/cel.h"

namespace harness::sim::cel {

namespace {

nlohmann::json gvkJson(const core::GroupVersionKind& gvk) {
  return {{"group", gvk.group}, {"version", gvk.version}, {"kind", gvk.kind}};
}

nlohmann::json conditionsJson(const std::vector<core::MatchCondition>& conditions) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& c : conditions) list.push_back({{"name", c.name}, {"expression", c.expression}});
  return list;
}

core::FieldErrorType errorType(const std::string& type) {
  if (type == "Required") return core::FieldErrorType::kRequired;
  if (type == "Invalid") return core::FieldErrorType::kInvalid;
  return core::FieldErrorType::kInternal;
}

}  // namespace

nlohmann::json userInfoJson(const core::UserInfo& u) {
  nlohmann::json user = {{"username", u.username},
                         {"uid", u.uid},
                         {"groups", u.groups},
                         {"extra", nlohmann::json::object()}};
  for (const auto& [key, values] : u.extra) user["extra"][key] = values;
  return user;
}

nlohmann::json attributesJson(const AdmissionAttributes& a) {
  nlohmann::json user = userInfoJson(a.user_info);
  return {{"operation", a.operation},
          {"kind", gvkJson(a.kind)},
          {"resource",
           {{"group", a.resource.group},
            {"version", a.resource.version},
            {"resource", a.resource.resource}}},
          {"subresource", a.subresource},
          {"namespace", a.namespace_name},
          {"name", a.name},
          {"object", a.object.value_or(nullptr)},
          {"oldObject", a.old_object.value_or(nullptr)},
          {"options", a.options.value_or(nullptr)},
          {"dryRun", a.dry_run},
          {"userInfo", std::move(user)}};
}

MatchConditionEvaluator matchConditionEvaluator(std::shared_ptr<KubeCel> cel) {
  return [cel = std::move(cel)](const HookEntry& hook, const AdmissionAttributes& attributes,
                                const core::GroupVersionKind& invocation_kind) {
    nlohmann::json request = {{"op", "evaluateMatchConditions"},
                              {"conditions", conditionsJson(hook.webhook.match_conditions)},
                              {"invocationKind", gvkJson(invocation_kind)},
                              {"attributes", attributesJson(attributes)}};
    auto response = cel->call(request);
    if (!response) throw std::runtime_error(response.error().message);
    if (auto it = response->find("filterError"); it != response->end() && it->is_string()) {
      throw std::runtime_error(it->get<std::string>());
    }
    std::vector<std::variant<bool, std::string>> results;
    const auto it = response->find("results");
    if (it == response->end() || !it->is_array()) {
      throw std::runtime_error("kube-cel answered without results");
    }
    for (const auto& r : *it) {
      if (auto e = r.find("error"); e != r.end() && e->is_string()) {
        results.emplace_back(e->get<std::string>());
      } else if (auto v = r.find("value"); v != r.end() && v->is_boolean()) {
        results.emplace_back(v->get<bool>());
      } else {
        throw std::runtime_error("kube-cel answered a result that is neither a value nor an error");
      }
    }
    return results;
  };
}

core::MatchConditionCompiler matchConditionCompiler(std::shared_ptr<KubeCel> cel) {
  return [cel = std::move(cel)](const std::vector<std::string>& expressions,
                                const std::vector<std::string>& stored) {
    nlohmann::json conditions = nlohmann::json::array();
    for (const auto& e : expressions) conditions.push_back({{"name", ""}, {"expression", e}});
    auto response =
        cel->call({{"op", "compileMatchConditions"}, {"conditions", conditions}, {"stored", stored}});
    if (!response) throw std::runtime_error(response.error().message);
    std::vector<std::optional<core::ExpressionError>> results;
    const auto it = response->find("results");
    if (it == response->end() || !it->is_array()) {
      throw std::runtime_error("kube-cel answered without results");
    }
    for (const auto& r : *it) {
      if (r.is_null()) {
        results.emplace_back(std::nullopt);
      } else {
        results.emplace_back(
            core::ExpressionError{errorType(r.value("type", "")), r.value("detail", "")});
      }
    }
    return results;
  };
}

core::MatchConditionCompiler unavailableCompiler(std::string reason) {
  return [reason = std::move(reason)](const std::vector<std::string>& expressions,
                                      const std::vector<std::string>&) {
    return std::vector<std::optional<core::ExpressionError>>(
        expressions.size(),
        core::ExpressionError{core::FieldErrorType::kInternal,
                              fmt::format("matchConditions need CEL: {}", reason)});
  };
}

}  // namespace harness::sim::cel
