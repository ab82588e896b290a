// The HTML report (html_report.h).

#include "harness/sim/html_report.h"

#include <algorithm>
#include <cstdlib>
#include <cstddef>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace harness::sim {

using nlohmann::json;

namespace {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string str(const json& object, const char* key) {
  auto it = object.is_object() ? object.find(key) : object.end();
  if (it == object.end()) return {};
  if (it->is_string()) return it->get<std::string>();
  if (it->is_null()) return {};
  return it->dump();
}

std::string duration(double nanoseconds) {
  if (nanoseconds < 1e6) return fmt::format("{:.0f}µs", nanoseconds / 1e3);
  if (nanoseconds < 1e9) return fmt::format("{:.1f}ms", nanoseconds / 1e6);
  return fmt::format("{:.2f}s", nanoseconds / 1e9);
}

constexpr char kStyle[] = R"(
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em}h2{font-size:1.2em;border-bottom:1px solid #ccc}h3{font-size:1.05em}
.step{margin:0 0 2em 0;padding:.5em 1em;border-left:4px solid #6a6}
.step.failed{border-left-color:#c33;background:#fff5f5}
.badge{display:inline-block;padding:0 .4em;border-radius:3px;color:#fff;font-size:.85em}
.ok{background:#393}.denied{background:#c33}.skipped{background:#888}
table.decisions{border-collapse:collapse;font-size:.85em;margin:.5em 0}
table.decisions th,table.decisions td{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}
tr.called td{background:#eef8ee}tr.error td{background:#fdd}
pre.diff{background:#f7f7f7;padding:.5em;font-size:.8em;overflow-x:auto}
.del{color:#b00}.add{color:#070}
.failure{color:#b00;font-weight:bold}
svg text{font-size:11px;font-family:system-ui,sans-serif}
)";

// One column of the sequence diagram.
struct Lane {
  std::string name;
  std::string detail;
};

// One arrow, or a pair (call and answer) drawn as one row.
struct Message {
  std::size_t from = 0;
  std::size_t to = 0;
  std::string label;
  std::string answer;       // drawn back from `to` to `from` when not empty
  double fraction = -1;     // latency / timeout, for the bar (negative: none)
  bool failed = false;
  bool parallel = false;    // validating webhooks: drawn in one band
};

// A policy binding's decision in a few words (live explain's policies).
std::string policyAnswer(const json& policy) {
  std::string decision = policy.value("decision", "");
  if (decision == "deny") return fmt::format("denied ({})", policy.value("code", 0));
  if (decision == "mutate") return "mutates the object";
  if (decision == "unchanged") return "leaves the object as it is";
  if (decision == "warn") return "admits with a warning";
  if (decision == "admit") return "admits";
  return decision;
}

// Whether a live explain's webhook or policy entry is the given admission plugin's.
bool isPolicyOf(const json& policy, const char* kind) {
  return policy.value("kind", "") == kind && policy.value("matched", false);
}

std::string sequenceDiagram(const json& explain) {
  std::vector<Lane> lanes = {{"client", ""},
                             {"kube-apiserver", "authn, authz, decode"},
                             {"mutating", "in-tree plugins"}};
  std::vector<Message> messages;
  const json& result = explain.value("result", json::object());
  messages.push_back({0, 1, explain.value("request", std::string()), "", -1, false, false});
  auto laneOf = [&](const std::string& name, const std::string& detail) {
    for (std::size_t i = 0; i < lanes.size(); ++i) {
      if (lanes[i].name == name) return i;
    }
    lanes.push_back({name, detail});
    return lanes.size() - 1;
  };
  // A call and its answer: the outcome, its latency against its timeout.
  auto callMessage = [&](const json& webhook, std::string label) {
    const json& call = webhook["call"];
    const std::size_t lane =
        laneOf(webhook.value("webhook", std::string()), webhook.value("configuration", ""));
    const double latency = call.value("latencyNanoseconds", 0.0);
    const double timeout = call.value("timeoutMilliseconds", 0.0) * 1e6;
    const std::string outcome = call.value("outcome", "");
    // Patched, Allowed and FailedOpen let the request go on; anything else stopped it.
    const bool failed = outcome != "Allowed" && outcome != "Patched" && outcome != "FailedOpen";
    // A call read back from an audit log has no latency or timeout (audit_report.h).
    if (!call.contains("latencyNanoseconds")) {
      return Message{1, lane, std::move(label), outcome + " (latency not recorded)", -1, failed,
                     false};
    }
    return Message{1, lane, std::move(label),
                   fmt::format("{} in {} of {}", outcome, duration(latency), duration(timeout)),
                   timeout > 0 ? std::min(1.0, latency / timeout) : -1, failed, false};
  };
  const json& webhooks = explain.value("webhooks", json::array());
  const json& policies = explain.value("policies", json::array());
  // Live explain: nothing is called; a webhook that matches is drawn as the call it would get.
  const bool live = explain.value("source", "") == "live";
  auto wouldCall = [&](const json& webhook, const std::string& label) {
    const std::size_t lane =
        laneOf(webhook.value("webhook", std::string()), webhook.value("configuration", ""));
    std::string answer = "not sent: its answer is not known";
    if (webhook.contains("injector")) {
      const json& injector = webhook["injector"];
      answer = injector.value("profile", "") + " injector: " +
               (injector.contains("decision") ? injector.value("decision", "")
                                              : "unknown (" + injector.value("error", "") + ")");
    }
    return Message{1, lane, label, answer, -1, false, false};
  };
  auto policyMessages = [&](const char* kind, const char* lane_name) {
    for (const auto& policy : policies) {
      if (!isPolicyOf(policy, kind)) continue;
      const std::size_t lane = laneOf(lane_name, kind);
      messages.push_back({1, lane, "binding " + policy.value("binding", std::string()),
                          policy.value("policy", std::string()) + ": " + policyAnswer(policy),
                          -1, policy.value("decision", "") == "deny", false});
    }
  };
  bool any_plugin = false;
  for (int round = 0; round <= 1; ++round) {
    bool round_plugins = false;
    for (const auto& plugin : explain.value("plugins", json::array())) {
      if (plugin.value("phase", "") == "mutating" && plugin.value("round", 0) == round) {
        round_plugins = true;
      }
    }
    if (round_plugins) {
      messages.push_back({1, 2, fmt::format("in-tree mutating plugins, round {}", round), "", -1,
                          false, false});
      any_plugin = true;
    }
    // The MutatingAdmissionPolicy plugin runs after the in-tree ones, before the webhooks.
    if (round == 0) policyMessages("MutatingAdmissionPolicy", "mutating policies");
    for (const auto& webhook : webhooks) {
      if (webhook.value("kind", "") != "mutating" || webhook.value("round", 0) != round) {
        continue;
      }
      if (webhook.contains("call")) {
        messages.push_back(
            callMessage(webhook, fmt::format("round {}: AdmissionReview", round)));
      } else if (live && webhook.value("decision", "") == "call") {
        messages.push_back(wouldCall(webhook, "would call (not sent)"));
      }
    }
  }
  if (!any_plugin) lanes[2].detail = "(none ran)";
  const std::size_t validation = laneOf("validation", "object, in-tree validating");
  const std::string stage = result.value("stage", "");
  messages.push_back({1, validation, "validate", "", -1, stage == "validation", false});
  policyMessages("ValidatingAdmissionPolicy", "validating policies");
  for (const auto& webhook : webhooks) {
    if (webhook.value("kind", "") != "validating") continue;
    if (webhook.contains("call")) {
      messages.push_back(callMessage(webhook, "AdmissionReview (parallel)"));
    } else if (live && webhook.value("decision", "") == "call") {
      messages.push_back(wouldCall(webhook, "would call (parallel)"));
    }
  }
  const bool allowed = result.value("allowed", false);
  const bool sent = result.value("sent", true);
  const std::size_t storage = laneOf("storage + audit", sent ? "etcd, audit event" : "(not sent)");
  if (allowed && sent) messages.push_back({1, storage, "persist, audit", "", -1, false, false});
  const std::string answer =
      result.contains("summary")
          ? result.value("summary", "")
          : fmt::format("{} {}", result.value("code", 0),
                        allowed ? "allowed" : result.value("message", "denied"));
  messages.push_back({1, 0, answer.size() > 90 ? answer.substr(0, 87) + "..." : answer, "", -1,
                      !allowed, false});

  constexpr int kLaneWidth = 150;
  constexpr int kTop = 46;
  constexpr int kRow = 34;
  const int width = static_cast<int>(lanes.size()) * kLaneWidth + 20;
  int rows = 0;
  for (const auto& message : messages) rows += message.answer.empty() ? 1 : 2;
  const int height = kTop + rows * kRow + 20;
  std::string svg = fmt::format(
      "<svg class=\"sequence\" width=\"{}\" height=\"{}\" "
      "viewBox=\"0 0 {} {}\">\n"
      "<defs><marker id=\"arrow\" markerWidth=\"8\" markerHeight=\"8\" refX=\"7\" refY=\"4\" "
      "orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\" fill=\"#333\"/></marker></defs>\n",
      width, height, width, height);
  auto x = [&](std::size_t lane) { return 10 + static_cast<int>(lane) * kLaneWidth + kLaneWidth / 2; };
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    svg += fmt::format(
        "<rect x=\"{}\" y=\"4\" width=\"{}\" height=\"34\" rx=\"4\" fill=\"#eef\" stroke=\"#99c\"/>"
        "<text x=\"{}\" y=\"18\" text-anchor=\"middle\" font-weight=\"bold\">{}</text>"
        "<text x=\"{}\" y=\"32\" text-anchor=\"middle\" fill=\"#666\">{}</text>"
        "<line x1=\"{}\" y1=\"38\" x2=\"{}\" y2=\"{}\" stroke=\"#bbb\" stroke-dasharray=\"4 3\"/>\n",
        x(i) - kLaneWidth / 2 + 6, kLaneWidth - 12, x(i), escape(lanes[i].name.substr(0, 24)),
        x(i), escape(lanes[i].detail.substr(0, 26)), x(i), x(i), height - 10);
  }
  // A label fits between its two lanes (about 6 px a character), else it is shortened.
  // Messages to and from the client start at its lane and may run across the others.
  auto fit = [&](const Message& message, const std::string& text) {
    const bool client = message.from == 0 || message.to == 0;
    const int span = client ? width - x(0) : std::abs(x(message.from) - x(message.to));
    const std::size_t room = static_cast<std::size_t>(std::max(12, span / 6));
    return text.size() <= room ? text : text.substr(0, room - 3) + "...";
  };
  auto labelX = [&](const Message& message) {
    return message.from == 0 || message.to == 0 ? x(0) + 4 : (x(message.from) + x(message.to)) / 2;
  };
  auto anchor = [&](const Message& message) {
    return message.from == 0 || message.to == 0 ? "start" : "middle";
  };
  int y = kTop;
  for (const auto& message : messages) {
    y += kRow;
    const std::string color = message.failed ? "#c33" : "#333";
    svg += fmt::format(
        "<line class=\"message\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" "
        "marker-end=\"url(#arrow)\"/><text x=\"{}\" y=\"{}\" text-anchor=\"{}\" "
        "fill=\"{}\">{}</text>\n",
        x(message.from), y, x(message.to), y, color, labelX(message), y - 5, anchor(message),
        color, escape(fit(message, message.label)));
    if (message.answer.empty()) continue;
    y += kRow;
    svg += fmt::format(
        "<line class=\"answer\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" "
        "stroke-dasharray=\"5 3\" marker-end=\"url(#arrow)\"/><text x=\"{}\" y=\"{}\" "
        "text-anchor=\"middle\" fill=\"{}\">{}</text>\n",
        x(message.to), y, x(message.from), y, color, (x(message.from) + x(message.to)) / 2, y - 5,
        color, escape(fit(message, message.answer)));
    if (message.fraction >= 0) {
      // The call's latency against its timeout: the bar's full height is the timeout.
      const int full = kRow * 2 - 8;
      const int used = std::max(1, static_cast<int>(full * message.fraction));
      svg += fmt::format(
          "<rect class=\"timeout\" x=\"{}\" y=\"{}\" width=\"8\" height=\"{}\" fill=\"none\" "
          "stroke=\"#999\"/><rect class=\"latency\" x=\"{}\" y=\"{}\" width=\"8\" height=\"{}\" "
          "fill=\"{}\"/>\n",
          x(message.to) + 4, y - kRow * 2 + 4, full, x(message.to) + 4, y - kRow * 2 + 4, used,
          message.failed ? "#c33" : "#6a6");
    }
  }
  svg += "</svg>\n";
  return svg;
}

std::string decisionTable(const json& explain) {
  std::string out =
      "<table class=\"decisions\"><tr><th>webhook</th><th>configuration</th><th>kind</th>"
      "<th>round</th><th>decision</th><th>deciding clause</th><th>outcome</th>"
      "<th>latency / timeout</th></tr>\n";
  for (const auto& webhook : explain.value("webhooks", json::array())) {
    const bool called = webhook.contains("call");
    const std::string decision = webhook.value("decision", "");
    std::string clauses;
    for (const auto& line : webhook.value("deciding", json::array())) {
      if (line.is_string()) clauses += escape(line.get<std::string>()) + "<br>";
    }
    std::string outcome;
    std::string timing;
    if (called) {
      const json& call = webhook["call"];
      outcome = escape(call.value("outcome", "") + ": " + call.value("outcomeText", ""));
      if (call.contains("latencyNanoseconds")) {
        timing = duration(call.value("latencyNanoseconds", 0.0)) + " / " +
                 duration(call.value("timeoutMilliseconds", 0.0) * 1e6);
      }
    }
    out += fmt::format(
        "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td></tr>\n",
        decision == "error" ? "error" : (called || decision == "call" ? "called" : "skipped"),
        escape(webhook.value("webhook", "")), escape(webhook.value("configuration", "")),
        escape(webhook.value("kind", "")), webhook.value("round", 0), escape(decision),
        webhook.value("skippedBy", "").empty()
            ? ""
            : " (" + escape(webhook.value("skippedBy", "")) + ")",
        clauses, outcome, timing);
  }
  for (const auto& policy : explain.value("policies", json::array())) {
    const std::string decision = policy.value("decision", "");
    std::string clauses;
    if (policy.contains("excludedBy")) {
      const json& excluded = policy["excludedBy"];
      const std::string clause = excluded.value("clause", "");
      clauses = escape(excluded.value("part", "")) +
                (clause.empty() ? std::string() : "." + escape(clause)) + "<br>";
      for (const auto& line : excluded.value("deciding", json::array())) {
        if (line.is_string()) clauses += escape(line.get<std::string>()) + "<br>";
      }
    }
    std::string binding = policy.value("binding", json()).is_string()
                              ? "binding " + policy.value("binding", std::string())
                              : std::string("no binding");
    out += fmt::format(
        "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td></td><td>{}</td><td>{}</td>"
        "<td>{}</td><td></td></tr>\n",
        decision == "deny" || decision == "error" ? "error"
                                                  : (policy.value("matched", false) ? "called"
                                                                                    : "skipped"),
        escape(policy.value("policy", "")), escape(binding), escape(policy.value("kind", "")),
        escape(decision), clauses, escape(policy.value("message", "")));
  }
  out += "</table>\n";
  return out;
}

// A patch's operations with their values before (red) and after (green) (explain's patchDiff).
std::string patchLines(const json& operations) {
  std::string out;
  for (const auto& op : operations) {
    out += escape(str(op, "op") + " " + str(op, "path")) + "\n";
    if (op.contains("before")) {
      out += "<span class=\"del\">    - " + escape(op["before"].dump()) + "</span>\n";
    }
    if (op.contains("after")) {
      out += "<span class=\"add\">    + " + escape(op["after"].dump()) + "</span>\n";
    }
  }
  return out;
}

std::string diffs(const json& explain) {
  std::string out;
  for (const auto& webhook : explain.value("webhooks", json::array())) {
    if (!webhook.contains("call") || !webhook["call"].contains("patch")) continue;
    out += fmt::format("<p>patch of {} (round {}):</p><pre class=\"diff\">",
                       escape(webhook.value("webhook", "")), webhook.value("round", 0));
    out += patchLines(webhook["call"]["patch"]) + "</pre>\n";
  }
  // Live explain: the mutations of the MutatingAdmissionPolicies (JSON patches) and the
  // injectors' own explanations.
  for (const auto& policy : explain.value("policies", json::array())) {
    if (!policy.contains("patch") || !policy["patch"].is_array()) continue;
    out += fmt::format("<p>mutation of {} (binding {}):</p><pre class=\"diff\">",
                       escape(policy.value("policy", "")), escape(policy.value("binding", "")));
    for (const auto& op : policy["patch"]) {
      out += escape(str(op, "op") + " " + str(op, "path")) + "\n";
      if (op.contains("value")) {
        out += "<span class=\"add\">    + " + escape(op["value"].dump()) + "</span>\n";
      }
    }
    out += "</pre>\n";
  }
  for (const auto& webhook : explain.value("webhooks", json::array())) {
    if (!webhook.contains("injector")) continue;
    const json& injector = webhook["injector"];
    out += fmt::format("<p>{} injector's decision for {} (offline, on the cluster's "
                       "configuration): {}</p><pre class=\"diff\">{}</pre>\n",
                       escape(injector.value("profile", "")), escape(webhook.value("webhook", "")),
                       escape(injector.value("decision", injector.value("error", ""))),
                       escape(injector.value("explanation", "")));
    if (injector.contains("patch") && injector["patch"].is_array()) {
      out += fmt::format("<p>predicted patch of {} (the {} injector's, offline; nothing is "
                         "sent):</p><pre class=\"diff\">",
                         escape(webhook.value("webhook", "")),
                         escape(injector.value("profile", "")));
      out += patchLines(injector["patch"]) + "</pre>\n";
    }
  }
  return out;
}

}  // namespace

std::string renderHtmlReport(const RunReport& report, const std::string& title) {
  std::string body;
  std::size_t steps = 0;
  std::size_t failed = 0;
  for (const auto& scenario : report.scenarios) {
    body += fmt::format("<h2>{}</h2>\n<p>{} — {}</p>\n", escape(scenario.name),
                        escape(scenario.file.string()), escape(scenario.description));
    if (scenario.error) {
      body += "<p class=\"failure\">" + escape(*scenario.error) + "</p>\n";
    }
    for (const auto& step : scenario.steps) {
      ++steps;
      const bool step_failed = step.status == StepStatus::kFailed;
      if (step_failed) ++failed;
      body += fmt::format("<div class=\"step{}\">\n<h3>{} <span class=\"badge {}\">{}</span></h3>\n",
                          step_failed ? " failed" : "", escape(step.name),
                          step_failed ? "denied" : (step.status == StepStatus::kPassed ? "ok" : "skipped"),
                          toString(step.status));
      for (const auto& failure : step.failures) {
        body += fmt::format("<p class=\"failure\">{}: {}</p>\n", escape(failure.field),
                            escape(failure.message));
      }
      const json& explain = step.explanation_json;
      if (explain.is_object()) {
        const json& result = explain.value("result", json::object());
        if (result.contains("summary")) {
          // Live explain: nothing was sent.
          body += fmt::format(
              "<p><code>{}</code> → <span class=\"badge {}\">{}</span> {}</p>\n",
              escape(explain.value("request", "")),
              result.value("allowed", false) ? "skipped" : "denied",
              escape(result.value("summary", "")), escape(result.value("message", "")));
        } else {
          body += fmt::format(
              "<p><code>{}</code> → <span class=\"badge {}\">{}</span> {}</p>\n",
              escape(explain.value("request", "")),
              result.value("allowed", false) ? "ok" : "denied", result.value("code", 0),
              escape(result.value("message", "")));
        }
        const json& reinvocation = explain.value("reinvocation", json::object());
        if (reinvocation.value("ran", false)) {
          std::string causes;
          for (const auto& name : reinvocation.value("triggeredBy", json::array())) {
            causes += (causes.empty() ? "" : ", ") + escape(name.get<std::string>());
          }
          body += "<p>reinvocation: round 1 ran because " +
                  (causes.empty() ? std::string("a webhook") : causes) +
                  " changed the object in round 0</p>\n";
        }
        body += sequenceDiagram(explain);
        body += decisionTable(explain);
        body += diffs(explain);
      } else if (!step.skip_reason.empty()) {
        body += "<p>" + escape(step.skip_reason) + "</p>\n";
      }
      body += "</div>\n";
    }
  }
  for (const auto& error : report.load_errors) {
    body += "<p class=\"failure\">" + escape(error.message) + "</p>\n";
  }
  // The one script: marks the page rendered once every diagram has its arrows (a test reads it
  // in the DOM; a page whose script fails keeps "pending").
  constexpr char kScript[] =
      "<script>(function(){var s=document.querySelectorAll('svg.sequence');var ok=s.length>0;"
      "s.forEach(function(e){if(!e.querySelector('line.message'))ok=false;});"
      "document.body.setAttribute('data-rendered',ok?'ok':'empty');})();</script>";
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>"
      "<style>{}</style></head>\n<body data-rendered=\"pending\">\n<h1>{}</h1>\n"
      "<p>{} step{}, {} failed</p>\n{}{}\n</body></html>\n",
      escape(title), kStyle, escape(title), steps, steps == 1 ? "" : "s", failed, body, kScript);
}

}  // namespace harness::sim
