// Followed: k8s.io/kubernetes pkg/printers/internalversion/printers.go (column definitions of
// pods, namespaces, deployments, replicasets, jobs, cronjobs, configmaps, secrets, webhook
// configurations; printPod's Ready,
// Status and Restarts cells), k8s.io/apiserver pkg/registry/rest/table.go (rows carry the object
// as PartialObjectMetadata unless includeObject says otherwise), k8s.io/apimachinery
// pkg/util/duration/duration.go HumanDuration and pkg/apis/meta/v1/types.go (Table,
// TableColumnDefinition, TableRow, PartialObjectMetadata).

#include "table.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <ctime>

#include <fmt/format.h>

#include "harness/sim/store.h"

namespace harness::sim::rest {
namespace {

// metav1.ObjectMeta{}.SwaggerDoc()["name"] and ["creationTimestamp"].
constexpr std::string_view kNameDescription =
    "Name must be unique within a namespace. Is required when creating resources, although some "
    "resources may allow a client to request the generation of an appropriate name automatically. "
    "Name is primarily intended for creation idempotence and configuration definition. Cannot be "
    "updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/"
    "names#names";
constexpr std::string_view kAgeDescription =
    "CreationTimestamp is a timestamp representing the server time when this object was created. "
    "It is not guaranteed to be set in happens-before order across separate operations. Clients "
    "may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the "
    "system. Read-only. Null for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

// batchv1.CronJobSpec{}.SwaggerDoc()["timeZone"].
constexpr std::string_view kTimeZoneDescription =
    "The time zone name for the given schedule, see "
    "https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, this will "
    "default to the time zone of the kube-controller-manager process. The set of valid time zone "
    "names and the time zone offset is loaded from the system-wide time zone database by the API "
    "server during CronJob validation and the controller manager during execution. If no "
    "system-wide time zone database can be found a bundled version of the database is used "
    "instead. If the time zone name becomes invalid during the lifetime of a CronJob or due to a "
    "change in host configuration, the controller will stop creating new new Jobs and will "
    "create a system event with the reason UnknownTimeZone. More information can be found in "
    "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones";

struct Column {
  std::string name;
  std::string type;
  std::string format;
  std::string description;
  int priority = 0;
};

nlohmann::json columnJson(const Column& c) {
  return {{"name", c.name},
          {"type", c.type},
          {"format", c.format},
          {"description", c.description},
          {"priority", c.priority}};
}

const nlohmann::json& at(const nlohmann::json& object, std::initializer_list<const char*> path) {
  static const nlohmann::json kNull;
  const nlohmann::json* current = &object;
  for (const char* key : path) {
    if (!current->is_object()) return kNull;
    auto it = current->find(key);
    if (it == current->end()) return kNull;
    current = &*it;
  }
  return *current;
}

std::string str(const nlohmann::json& value, std::string fallback = {}) {
  return value.is_string() && !value.get<std::string>().empty() ? value.get<std::string>()
                                                                : std::move(fallback);
}

std::int64_t integer(const nlohmann::json& value) {
  return value.is_number_integer() ? value.get<std::int64_t>() : 0;
}

std::size_t count(const nlohmann::json& value) {
  return value.is_object() || value.is_array() ? value.size() : 0;
}

Column nameColumn() { return {"Name", "string", "name", std::string(kNameDescription), 0}; }
// The wide columns of workloads with a Pod template (printDeployment, printReplicaSet).
std::array<Column, 2> templateColumns() {
  return {Column{"Containers", "string", "", "Names of each container in the template.", 1},
          Column{"Images", "string", "", "Images referenced by each container in the template.",
                 1}};
}
// batchv1.JobSpec{}.SwaggerDoc()["selector"]: the wide Selector column of Jobs and CronJobs.
Column jobSelectorColumn() {
  return {"Selector", "string", "",
          "A label query over pods that should match the pod count. Normally, the system sets "
          "this field for you. More info: https://kubernetes.io/docs/concepts/overview/"
          "working-with-objects/labels/#label-selectors",
          1};
}
Column ageColumn() { return {"Age", "string", "", std::string(kAgeDescription), 0}; }

// printPod, reduced to what a simulated pod (no kubelet) can carry.
nlohmann::json podCells(const nlohmann::json& pod, const std::string& name, const std::string& age) {
  const nlohmann::json& containers = at(pod, {"spec", "containers"});
  std::size_t total = containers.is_array() ? containers.size() : 0;
  // Restartable init containers (native sidecars) count as containers in READY (printPod,
  // pkg/printers/internalversion/printers.go: totalContainers++ for each).
  const nlohmann::json& init_containers = at(pod, {"spec", "initContainers"});
  if (init_containers.is_array()) {
    for (const auto& c : init_containers) {
      if (str(at(c, {"restartPolicy"})) == "Always") ++total;
    }
  }
  std::int64_t restarts = 0;
  std::size_t ready = 0;
  std::string reason = str(at(pod, {"status", "phase"}));
  if (const auto& r = at(pod, {"status", "reason"}); r.is_string() && !r.get<std::string>().empty()) {
    reason = r.get<std::string>();
  }
  const nlohmann::json& statuses = at(pod, {"status", "containerStatuses"});
  if (statuses.is_array()) {
    for (auto it = statuses.rbegin(); it != statuses.rend(); ++it) {
      restarts += integer(at(*it, {"restartCount"}));
      const std::string waiting = str(at(*it, {"state", "waiting", "reason"}));
      const std::string terminated = str(at(*it, {"state", "terminated", "reason"}));
      if (!waiting.empty()) {
        reason = waiting;
      } else if (!terminated.empty()) {
        reason = terminated;
      } else if (at(*it, {"ready"}).is_boolean() && at(*it, {"ready"}).get<bool>() &&
                 at(*it, {"state", "running"}).is_object()) {
        ++ready;
      }
    }
  }
  if (!at(pod, {"metadata", "deletionTimestamp"}).is_null()) reason = "Terminating";
  const nlohmann::json& gates = at(pod, {"spec", "readinessGates"});
  return {name,
          fmt::format("{}/{}", ready, total),
          reason,
          std::to_string(restarts),
          age,
          str(at(pod, {"status", "podIP"}), "<none>"),
          str(at(pod, {"spec", "nodeName"}), "<none>"),
          str(at(pod, {"status", "nominatedNodeName"}), "<none>"),
          count(gates) == 0 ? std::string("<none>") : fmt::format("0/{}", count(gates))};
}

std::string joinContainerField(const nlohmann::json& object, const char* field) {
  const nlohmann::json& containers = at(object, {"spec", "template", "spec", "containers"});
  std::string out;
  if (!containers.is_array()) return out;
  for (const auto& c : containers) {
    if (!out.empty()) out += ",";
    out += str(at(c, {field}));
  }
  return out;
}

std::string selectorText(const nlohmann::json& selector) {
  if (!selector.is_object()) return "<none>";
  std::string out;
  const nlohmann::json& labels = at(selector, {"matchLabels"});
  if (labels.is_object()) {
    for (const auto& [key, value] : labels.items()) {
      if (!out.empty()) out += ",";
      out += key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
    }
  }
  return out.empty() ? "<none>" : out;
}

struct Printer {
  std::vector<Column> columns;
  std::function<nlohmann::json(const nlohmann::json&, const std::string&, const std::string&)> cells;
};

Printer printerFor(const core::ResourceInfo& info) {
  const std::string& resource = info.resource.resource;
  const std::string& group = info.resource.group;
  if (group.empty() && resource == "pods") {
    return {{nameColumn(),
             {"Ready", "string", "", "The aggregate readiness state of this pod for accepting traffic."},
             {"Status", "string", "", "The aggregate status of the containers in this pod."},
             {"Restarts", "string", "",
              "The number of times the containers in this pod have been restarted and when the "
              "last container in this pod has restarted."},
             ageColumn(),
             {"IP", "string", "", "podIP address allocated to the pod.", 1},
             {"Node", "string", "", "NodeName indicates in which node this pod is scheduled.", 1},
             {"Nominated Node", "string", "",
              "nominatedNodeName is set only when this pod preempts other pods on the node.", 1},
             {"Readiness Gates", "string", "",
              "If specified, all readiness gates will be evaluated for pod readiness.", 1}},
            podCells};
  }
  if (group.empty() && resource == "namespaces") {
    return {{nameColumn(), {"Status", "string", "", "The status of the namespace"}, ageColumn()},
            [](const nlohmann::json& o, const std::string& name, const std::string& age) {
              return nlohmann::json{name, str(at(o, {"status", "phase"})), age};
            }};
  }
  if (resource == "deployments") {
    return {{nameColumn(),
             {"Ready", "string", "", "Number of the pod with ready state"},
             {"Up-to-date", "integer", "",
              "Total number of non-terminated pods targeted by this deployment that have the "
              "desired template spec."},
             {"Available", "integer", "",
              "Total number of available pods (ready for at least minReadySeconds) targeted by "
              "this deployment."},
             ageColumn(), templateColumns()[0], templateColumns()[1],
             {"Selector", "string", "",
              "Label selector for pods. Existing ReplicaSets whose pods are selected by this will "
              "be the ones affected by this deployment.",
              1}},
            [](const nlohmann::json& o, const std::string& name, const std::string& age) {
              const auto& replicas = at(o, {"spec", "replicas"});
              const std::int64_t desired = replicas.is_number_integer() ? integer(replicas) : 1;
              return nlohmann::json{
                  name,
                  fmt::format("{}/{}", integer(at(o, {"status", "readyReplicas"})), desired),
                  integer(at(o, {"status", "updatedReplicas"})),
                  integer(at(o, {"status", "availableReplicas"})),
                  age,
                  joinContainerField(o, "name"),
                  joinContainerField(o, "image"),
                  selectorText(at(o, {"spec", "selector"}))};
            }};
  }
  if (group == "batch" && resource == "jobs") {
    // printJob: the status from the conditions, COMPLETIONS succeeded/completions, DURATION
    // since startTime (no Job completes here).
    return {{nameColumn(),
             {"Status", "string", "", "Status of the job."},
             {"Completions", "string", "",
              "The number of pods which reached phase Succeeded. The value increases "
              "monotonically for a given spec. However, it may decrease in reaction to scale "
              "down of elastic indexed jobs."},
             {"Duration", "string", "", "Time required to complete the job."},
             ageColumn(), templateColumns()[0], templateColumns()[1],
             jobSelectorColumn()},
            [](const nlohmann::json& o, const std::string& name, const std::string& age) {
              const std::int64_t succeeded = integer(at(o, {"status", "succeeded"}));
              std::string completions;
              if (at(o, {"spec", "completions"}).is_number_integer()) {
                completions =
                    fmt::format("{}/{}", succeeded, integer(at(o, {"spec", "completions"})));
              } else if (integer(at(o, {"spec", "parallelism"})) > 1) {
                completions = fmt::format("{}/1 of {}", succeeded,
                                          integer(at(o, {"spec", "parallelism"})));
              } else {
                completions = fmt::format("{}/1", succeeded);
              }
              std::string duration;
              const std::string started = str(at(o, {"status", "startTime"}));
              const std::string completed = str(at(o, {"status", "completionTime"}));
              if (!started.empty() && completed.empty()) {
                duration = ageSince(started, std::chrono::system_clock::now());
              } else if (!started.empty()) {
                const auto a = parseRfc3339(started);
                const auto b = parseRfc3339(completed);
                duration = a && b ? humanDuration(*b - *a) : std::string("<unknown>");
              }
              auto has = [&](std::string_view type) {
                const auto& conditions = at(o, {"status", "conditions"});
                if (!conditions.is_array()) return false;
                return std::any_of(conditions.begin(), conditions.end(), [&](const auto& c) {
                  return str(at(c, {"type"})) == type && str(at(c, {"status"})) == "True";
                });
              };
              std::string status = "Running";
              if (has("Complete")) {
                status = "Complete";
              } else if (has("Failed")) {
                status = "Failed";
              } else if (!at(o, {"metadata", "deletionTimestamp"}).is_null()) {
                status = "Terminating";
              } else if (has("Suspended")) {
                status = "Suspended";
              } else if (has("FailureTarget")) {
                status = "FailureTarget";
              } else if (has("SuccessCriteriaMet")) {
                status = "SuccessCriteriaMet";
              }
              return nlohmann::json{name,
                                    status,
                                    completions,
                                    duration,
                                    age,
                                    joinContainerField(o, "name"),
                                    joinContainerField(o, "image"),
                                    selectorText(at(o, {"spec", "selector"}))};
            }};
  }
  if (group == "batch" && resource == "cronjobs") {
    // printCronJob.
    return {{nameColumn(),
             {"Schedule", "string", "",
              "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron."},
             {"Timezone", "string", "", std::string(kTimeZoneDescription)},
             {"Suspend", "boolean", "",
              "This flag tells the controller to suspend subsequent executions, it does not "
              "apply to already started executions.  Defaults to false."},
             {"Active", "integer", "", "A list of pointers to currently running jobs."},
             {"Last Schedule", "string", "",
              "Information when was the last time the job was successfully scheduled."},
             ageColumn(), templateColumns()[0], templateColumns()[1],
             jobSelectorColumn()},
            [](const nlohmann::json& o, const std::string& name, const std::string& age) {
              const std::string last = str(at(o, {"status", "lastScheduleTime"}));
              const auto& suspend = at(o, {"spec", "suspend"});
              const nlohmann::json& job_template = at(o, {"spec", "jobTemplate"});
              return nlohmann::json{
                  name,
                  str(at(o, {"spec", "schedule"})),
                  str(at(o, {"spec", "timeZone"}), "<none>"),
                  suspend.is_boolean() ? (suspend.get<bool>() ? "True" : "False") : "<unset>",
                  count(at(o, {"status", "active"})),
                  last.empty() ? std::string("<none>")
                               : ageSince(last, std::chrono::system_clock::now()),
                  age,
                  joinContainerField(job_template, "name"),
                  joinContainerField(job_template, "image"),
                  selectorText(at(job_template, {"spec", "selector"}))};
            }};
  }
  if (resource == "replicasets") {
    // printReplicaSet (pkg/printers/internalversion/printers.go).
    return {{nameColumn(),
             {"Desired", "integer", "",
              "Replicas is the number of desired pods. This is a pointer to distinguish between "
              "explicit zero and unspecified. Defaults to 1."},
             {"Current", "integer", "",
              "Replicas is the most recently observed number of non-terminating pods."},
             {"Ready", "integer", "",
              "The number of non-terminating pods targeted by this ReplicaSet with a Ready "
              "Condition."},
             ageColumn(), templateColumns()[0], templateColumns()[1],
             {"Selector", "string", "",
              "Selector is a label query over pods that should match the replica count.", 1}},
            [](const nlohmann::json& o, const std::string& name, const std::string& age) {
              const auto& replicas = at(o, {"spec", "replicas"});
              return nlohmann::json{
                  name,
                  replicas.is_number_integer() ? integer(replicas) : 1,
                  integer(at(o, {"status", "replicas"})),
                  integer(at(o, {"status", "readyReplicas"})),
                  age,
                  joinContainerField(o, "name"),
                  joinContainerField(o, "image"),
                  selectorText(at(o, {"spec", "selector"}))};
            }};
  }
  if (group.empty() && resource == "configmaps") {
    return {{nameColumn(), {"Data", "integer", "", "Number of data in the configmap"}, ageColumn()},
            [](const nlohmann::json& o, const std::string& name, const std::string& age) {
              return nlohmann::json{name, count(at(o, {"data"})) + count(at(o, {"binaryData"})),
                                    age};
            }};
  }
  if (group.empty() && resource == "secrets") {
    return {{nameColumn(),
             {"Type", "string", "", "The type of the secret"},
             {"Data", "integer", "", "Number of data in the secret"},
             ageColumn()},
            [](const nlohmann::json& o, const std::string& name, const std::string& age) {
              return nlohmann::json{name, str(at(o, {"type"})), count(at(o, {"data"})), age};
            }};
  }
  if (group.empty() && resource == "events") {
    // pkg/printers/internalversion/printers.go eventColumnDefinitions and printEvent.
    return {{{"Last Seen", "string", "", "The time at which the most recent occurrence of this "
                                         "event was recorded."},
             {"Type", "string", "", "Type of this event (Normal, Warning), new types could be "
                                    "added in the future"},
             {"Reason", "string", "", "This should be a short, machine understandable string "
                                      "that gives the reason for the transition into the "
                                      "object's current status."},
             {"Object", "string", "", "The object that this event is about."},
             {"Subobject", "string", "", "The subobject (fieldPath) of the involved object.", 1},
             {"Source", "string", "", "The component reporting this event.", 1},
             {"Message", "string", "", "A human-readable description of the status of this "
                                       "operation."},
             {"First Seen", "string", "", "The time at which the event was first recorded.", 1},
             {"Count", "string", "", "The number of times this event has occurred.", 1},
             {"Name", "string", "name", "Name must be unique within a namespace.", 1}},
            [](const nlohmann::json& o, const std::string& name, const std::string&) {
              const auto now = std::chrono::system_clock::now();
              auto since = [&](const nlohmann::json& stamp) {
                const std::string text = str(stamp);
                return text.empty() ? std::string("<unknown>") : ageSince(text, now);
              };
              const nlohmann::json& last_stamp = at(o, {"lastTimestamp"}).is_string()
                                                     ? at(o, {"lastTimestamp"})
                                                     : at(o, {"eventTime"});
              const nlohmann::json& first_stamp = at(o, {"firstTimestamp"}).is_string()
                                                      ? at(o, {"firstTimestamp"})
                                                      : at(o, {"eventTime"});
              const std::int64_t count = at(o, {"count"}).is_number_integer()
                                             ? integer(at(o, {"count"}))
                                             : 1;
              std::string last_seen = since(last_stamp);
              if (count > 1) {
                last_seen = fmt::format("{} (x{} over {})", last_seen, count, since(first_stamp));
              }
              std::string kind = str(at(o, {"involvedObject", "kind"}));
              std::transform(kind.begin(), kind.end(), kind.begin(),
                             [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
              std::string source = str(at(o, {"source", "component"}));
              if (source.empty()) source = str(at(o, {"reportingComponent"}));
              if (const std::string host = str(at(o, {"source", "host"})); !host.empty()) {
                source += ", " + host;
              }
              return nlohmann::json{last_seen,
                                    str(at(o, {"type"})),
                                    str(at(o, {"reason"})),
                                    kind + "/" + str(at(o, {"involvedObject", "name"})),
                                    str(at(o, {"involvedObject", "fieldPath"})),
                                    source,
                                    str(at(o, {"message"})),
                                    since(first_stamp),
                                    std::to_string(count),
                                    name};
            }};
  }
  if (resource == "mutatingwebhookconfigurations" ||
      resource == "validatingwebhookconfigurations") {
    return {{nameColumn(),
             {"Webhooks", "integer", "",
              "Webhooks indicates the number of webhooks registered in this configuration"},
             ageColumn()},
            [](const nlohmann::json& o, const std::string& name, const std::string& age) {
              return nlohmann::json{name, count(at(o, {"webhooks"})), age};
            }};
  }
  if (group == "rbac.authorization.k8s.io" &&
      (resource == "rolebindings" || resource == "clusterrolebindings")) {
    // printRoleBinding / printClusterRoleBinding (Wide, as the server always prints): the
    // subjects by kind (rbac.SubjectsStrings), a service account as namespace/name.
    // (rbacv1beta1's SwaggerDoc of roleRef, as upstream's columns take it)
    const bool namespaced = resource == "rolebindings";
    const std::string of = namespaced ? "roleBinding" : "clusterRoleBinding";
    const std::string role_ref =
        namespaced ? "roleRef can reference a Role in the current namespace or a ClusterRole in "
                     "the global namespace. If the RoleRef cannot be resolved, the Authorizer "
                     "must return an error."
                   : "roleRef can only reference a ClusterRole in the global namespace. If the "
                     "RoleRef cannot be resolved, the Authorizer must return an error.";
    return {{nameColumn(),
             {"Role", "string", "", role_ref},
             ageColumn(),
             {"Users", "string", "", "Users in the " + of, 1},
             {"Groups", "string", "", "Groups in the " + of, 1},
             {"ServiceAccounts", "string", "", "ServiceAccounts in the " + of, 1}},
            [](const nlohmann::json& o, const std::string& name, const std::string& age) {
              std::string users, groups, accounts;
              auto append = [](std::string& list, const std::string& value) {
                if (!list.empty()) list += ", ";
                list += value;
              };
              const nlohmann::json& subjects = at(o, {"subjects"});
              if (subjects.is_array()) {
                for (const auto& subject : subjects) {
                  const std::string kind = str(at(subject, {"kind"}));
                  const std::string subject_name = str(at(subject, {"name"}));
                  if (kind == "User") append(users, subject_name);
                  if (kind == "Group") append(groups, subject_name);
                  if (kind == "ServiceAccount") {
                    append(accounts, str(at(subject, {"namespace"})) + "/" + subject_name);
                  }
                }
              }
              return nlohmann::json{name,
                                    str(at(o, {"roleRef", "kind"})) + "/" +
                                        str(at(o, {"roleRef", "name"})),
                                    age, users, groups, accounts};
            }};
  }
  if (group == "rbac.authorization.k8s.io") {
    // Roles and ClusterRoles: the registry's rest.NewDefaultTableConvertor (k8s.io/apiserver
    // pkg/registry/rest/table.go): the name and creationTimestamp in RFC 3339, UTC.
    return {{nameColumn(), {"Created At", "date", "", std::string(kAgeDescription), 0}},
            [](const nlohmann::json& o, const std::string& name, const std::string&) {
              return nlohmann::json{name, str(at(o, {"metadata", "creationTimestamp"}))};
            }};
  }
  return {{nameColumn(), ageColumn()},
          [](const nlohmann::json&, const std::string& name, const std::string& age) {
            return nlohmann::json{name, age};
          }};
}

}  // namespace

std::string humanDuration(std::chrono::nanoseconds d) {
  using std::chrono::duration_cast;
  const auto seconds = duration_cast<std::chrono::seconds>(d).count();
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < std::int64_t{60} * 2) return fmt::format("{}s", seconds);
  const auto minutes = seconds / 60;
  if (minutes < 10) {
    const auto s = seconds % 60;
    return s == 0 ? fmt::format("{}m", minutes) : fmt::format("{}m{}s", minutes, s);
  }
  if (minutes < std::int64_t{60} * 3) return fmt::format("{}m", minutes);
  const auto hours = seconds / 3600;
  if (hours < 8) {
    const auto m = minutes % 60;
    return m == 0 ? fmt::format("{}h", hours) : fmt::format("{}h{}m", hours, m);
  }
  if (hours < 48) return fmt::format("{}h", hours);
  if (hours < std::int64_t{24} * 8) {
    const auto h = hours % 24;
    return h == 0 ? fmt::format("{}d", hours / 24) : fmt::format("{}d{}h", hours / 24, h);
  }
  if (hours < std::int64_t{24} * 365 * 2) return fmt::format("{}d", hours / 24);
  if (hours < std::int64_t{24} * 365 * 8) {
    const auto dy = (hours / 24) % 365;
    return dy == 0 ? fmt::format("{}y", hours / 24 / 365)
                   : fmt::format("{}y{}d", hours / 24 / 365, dy);
  }
  return fmt::format("{}y", hours / 24 / 365);
}

std::string ageSince(const std::string& rfc3339, std::chrono::system_clock::time_point now) {
  const auto created = parseRfc3339(rfc3339);
  return created ? humanDuration(now - *created) : std::string("<unknown>");
}

nlohmann::json toPartialObjectMetadata(const nlohmann::json& object, std::string_view version) {
  nlohmann::json metadata = object.is_object() && object.contains("metadata")
                                ? object["metadata"]
                                : nlohmann::json::object();
  return {{"kind", "PartialObjectMetadata"},
          {"apiVersion", fmt::format("meta.k8s.io/{}", version)},
          {"metadata", std::move(metadata)}};
}

nlohmann::json toPartialObjectMetadataList(const std::vector<nlohmann::json>& objects,
                                           const std::string& resource_version,
                                           std::string_view version) {
  nlohmann::json items = nlohmann::json::array();
  for (const auto& object : objects) {
    nlohmann::json item = toPartialObjectMetadata(object, version);
    // Like every list, items are written without their TypeMeta.
    item.erase("kind");
    item.erase("apiVersion");
    items.push_back(std::move(item));
  }
  return {{"kind", "PartialObjectMetadataList"},
          {"apiVersion", fmt::format("meta.k8s.io/{}", version)},
          {"metadata", {{"resourceVersion", resource_version}}},
          {"items", std::move(items)}};
}

nlohmann::json toTable(const core::ResourceInfo& info, const std::vector<nlohmann::json>& objects,
                       const std::string& resource_version, std::string_view table_version,
                       IncludeObject include, std::chrono::system_clock::time_point now) {
  const Printer printer = printerFor(info);
  nlohmann::json columns = nlohmann::json::array();
  for (const auto& column : printer.columns) columns.push_back(columnJson(column));
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& object : objects) {
    const std::string name = str(at(object, {"metadata", "name"}));
    const std::string age = ageSince(str(at(object, {"metadata", "creationTimestamp"})), now);
    nlohmann::json row = {{"cells", printer.cells(object, name, age)}};
    if (include == IncludeObject::kMetadata) {
      row["object"] = toPartialObjectMetadata(object, table_version);
    } else if (include == IncludeObject::kObject) {
      row["object"] = object;
    }
    rows.push_back(std::move(row));
  }
  return {{"kind", "Table"},
          {"apiVersion", fmt::format("meta.k8s.io/{}", table_version)},
          {"metadata", {{"resourceVersion", resource_version}}},
          {"columnDefinitions", std::move(columns)},
          {"rows", std::move(rows)}};
}

nlohmann::json customResourceTable(const nlohmann::json& converted,
                                   const std::vector<nlohmann::json>& objects,
                                   const std::string& resource_version,
                                   std::string_view table_version, IncludeObject include) {
  nlohmann::json rows = nlohmann::json::array();
  const nlohmann::json* converted_rows =
      converted.contains("rows") && converted["rows"].is_array() ? &converted["rows"] : nullptr;
  for (std::size_t i = 0; i < objects.size(); ++i) {
    nlohmann::json row = {{"cells", nlohmann::json::array()}};
    if (converted_rows != nullptr && i < converted_rows->size() &&
        (*converted_rows)[i].contains("cells")) {
      row["cells"] = (*converted_rows)[i]["cells"];
    }
    if (include == IncludeObject::kMetadata) {
      row["object"] = toPartialObjectMetadata(objects[i], table_version);
    } else if (include == IncludeObject::kObject) {
      row["object"] = objects[i];
    }
    rows.push_back(std::move(row));
  }
  return {{"kind", "Table"},
          {"apiVersion", fmt::format("meta.k8s.io/{}", table_version)},
          {"metadata", {{"resourceVersion", resource_version}}},
          {"columnDefinitions", converted.value("columnDefinitions", nlohmann::json::array())},
          {"rows", std::move(rows)}};
}

IncludeObject parseIncludeObject(std::string_view value) {
  if (value == "None") return IncludeObject::kNone;
  if (value == "Object") return IncludeObject::kObject;
  return IncludeObject::kMetadata;
}

}  // namespace harness::sim::rest
