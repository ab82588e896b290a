// WATCH (k8s.io/apiserver pkg/endpoints/handlers/get.go ListResource -> handleWatch, watch.go
// serveWatchHandler / WatchServer.HandleHTTP, response.go watchEncoder), served from the store's
// event rings as kube-apiserver serves it from its watch cache (pkg/storage/cacher cacher.go
// Watch, watch_cache.go getAllEventsSinceLocked, cache_watcher.go convertToWatchEvent and
// nextBookmarkTime):
//   * query: resourceVersion, resourceVersionMatch, sendInitialEvents, allowWatchBookmarks,
//     timeoutSeconds, labelSelector, fieldSelector; listOpts' defaults and validation with the
//     WatchList feature gate on (its default since 1.34): a watch from "" or "0" without
//     sendInitialEvents/resourceVersionMatch is sent the current objects as ADDED events;
//   * the stream: one JSON document per line, {"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR",
//     "object":...}, the object in the version requested (a Table of one row, column definitions
//     on the first event only, or PartialObjectMetadata when the Accept header asks for them);
//   * an object that starts or stops matching the selectors is sent as ADDED or DELETED;
//   * a resourceVersion older than the ring: one ERROR event, 410 Expired "too old resource
//     version: <rv> (<oldest-1>)", then the end, as the cacher's errWatcher;
//   * bookmarks (allowWatchBookmarks=true): after the initial events with the annotation
//     k8s.io/initial-events-end, then every RestApiOptions::watch_bookmark_interval and 2 s before
//     the deadline; their object has only apiVersion, kind and metadata.resourceVersion (the
//     apiserver sends an empty typed object);
//   * the end: timeoutSeconds, else a random time between 30 and 60 minutes (the apiserver's
//     --min-request-timeout 1800 s times 1 to 2), the client going away, the server stopping, or
//     a client too slow to take its events (kRateLimitedEvents queued: the cacher's watcher is
//     closed the same way when its channel stays full).

#include <chrono>
#include <deque>
#include <functional>
#include <limits>
#include <mutex>
#include <random>

#include <fmt/format.h>

#include "handler.h"
#include "harness/core/field_errors.h"
#include "harness/core/label_selector.h"
#include "harness/core/unstructured.h"
#include "harness/go/strconv.h"
#include "selectors.h"
#include "table.h"

namespace harness::sim {

using rest::Call;

namespace {

// Live events a watch may hold for a client that does not read them.
constexpr std::size_t kMaxQueuedEvents = 10'000;
// Events encoded per pull, so that a long initial list does not hold the connection's thread.
constexpr std::size_t kEventsPerPull = 100;
// metav1.InitialEventsAnnotationKey.
constexpr std::string_view kInitialEventsEnd = "k8s.io/initial-events-end";

class WatchStream final : public net::BodySource {
 public:
  struct Settings {
    core::ResourceInfo info;
    rest::OutputFormat output;
    rest::IncludeObject include = rest::IncludeObject::kMetadata;
    core::LabelSelector labels;
    std::vector<rest::FieldRequirement> fields;
    std::string namespace_name;
    bool bookmarks = false;
    bool initial_events_end = false;  // a bookmark after the replayed events
    std::chrono::steady_clock::time_point deadline;
    std::chrono::milliseconds bookmark_interval{60'000};
    // A custom resource's Table of one object (its CRD's printer columns), when set.
    std::function<nlohmann::json(const nlohmann::json& object, const std::string& rv)> table;
  };

  explicit WatchStream(Settings settings) : settings_(std::move(settings)) {}
  ~WatchStream() override { subscription_.reset(); }

  // The store's sink: queues one live event (store lock held; no store calls here).
  void push(const StoreEventPtr& event) {
    std::lock_guard lock(mutex_);
    if (cancelled_ || overflowed_) return;
    if (queue_.size() >= kMaxQueuedEvents) {
      overflowed_ = true;
    } else {
      queue_.push_back(event);
    }
    if (wake_) wake_();
  }

  // What the store answered: the replay goes before any live event already queued.
  void begin(WatchStart start) {
    std::lock_guard lock(mutex_);
    queue_.insert(queue_.begin(), start.replay.begin(), start.replay.end());
    replayed_left_ = start.replay.size();
    last_revision_ = start.revision;
    subscription_ = std::move(start.subscription);
  }

  // A watch that only reports an error (the cacher's errWatcher).
  void fail(const core::Status& status) {
    std::lock_guard lock(mutex_);
    error_ = status;
  }

  void start(std::function<void()> wake) override {
    std::lock_guard lock(mutex_);
    if (!cancelled_) wake_ = std::move(wake);
  }

  Pull pull() override {
    std::vector<StoreEventPtr> events;
    bool overflowed = false;
    bool replay_done = false;
    std::optional<core::Status> error;
    {
      std::lock_guard lock(mutex_);
      if (error_) error = std::exchange(error_, std::nullopt);
      while (!queue_.empty() && events.size() < kEventsPerPull) {
        events.push_back(std::move(queue_.front()));
        queue_.pop_front();
        if (replayed_left_ > 0 && --replayed_left_ == 0) break;
      }
      for (const auto& event : events) last_revision_ = std::max(last_revision_, event->revision);
      replay_done = replayed_left_ == 0;
      overflowed = overflowed_ && queue_.empty();
    }
    Pull out;
    if (error) {
      out.data = eventLine("ERROR", core::toJson(error->withTypeMeta()));
      out.end = true;
      return out;
    }
    for (const auto& event : events) appendEvent(out.data, *event);
    const auto now = std::chrono::steady_clock::now();
    if (replay_done && settings_.initial_events_end && !initial_end_sent_) {
      initial_end_sent_ = true;
      out.data += bookmark(true);
      next_bookmark_ = nextBookmarkTime(now);
    }
    if (overflowed || now >= settings_.deadline) {
      out.end = true;
      return out;
    }
    if (settings_.bookmarks && replay_done) {
      if (!next_bookmark_) next_bookmark_ = nextBookmarkTime(now);
      if (*next_bookmark_ && now >= **next_bookmark_) {
        out.data += bookmark(false);
        next_bookmark_ = nextBookmarkTime(now);
      }
    }
    out.wake_at = settings_.deadline;
    if (next_bookmark_ && *next_bookmark_) out.wake_at = std::min(out.wake_at, **next_bookmark_);
    return out;
  }

  void cancel() override {
    std::unique_ptr<StoreSubscription> subscription;
    {
      std::lock_guard lock(mutex_);
      cancelled_ = true;
      wake_ = nullptr;
      subscription = std::move(subscription_);
    }
    // Unsubscribing takes the store's lock, under which push() takes ours: not while holding it.
    subscription.reset();
  }

 private:
  // cache_watcher.go nextBookmarkTime: a minute from now, or 2 s before the deadline if sooner;
  // none once that has passed.
  [[nodiscard]] std::optional<std::chrono::steady_clock::time_point> nextBookmarkTime(
      std::chrono::steady_clock::time_point now) const {
    if (!settings_.bookmarks) return std::nullopt;
    auto next = now + settings_.bookmark_interval;
    const auto before_deadline = settings_.deadline - std::chrono::seconds(2);
    if (before_deadline < next) next = before_deadline;
    if (next < now) return std::nullopt;
    return next;
  }

  [[nodiscard]] bool matches(const nlohmann::json& object) const {
    if (!settings_.namespace_name.empty() &&
        core::nestedString(object, {"metadata", "namespace"}) != settings_.namespace_name) {
      return false;
    }
    auto labels = core::labelsOf(object);
    return labels && settings_.labels.matches(*labels) &&
           rest::matchesFields(object, settings_.fields);
  }

  // cache_watcher.go convertToWatchEvent: the event as this watcher's selectors see it.
  void appendEvent(std::string& out, const StoreEvent& event) {
    const bool deleted = event.type == StoreEvent::Type::kDeleted;
    const bool now_matches = !deleted && matches(event.object);
    bool before_matched = false;
    if (deleted) {
      before_matched = matches(event.object);
    } else if (event.previous) {
      before_matched = matches(*event.previous);
    }
    if (!now_matches && !before_matched) return;
    if (now_matches) {
      const char* type = event.type == StoreEvent::Type::kAdded || !before_matched ? "ADDED"
                                                                                  : "MODIFIED";
      out += eventLine(type, present(event.object));
      return;
    }
    // Stopped matching, or deleted: the state before, at the event's resourceVersion.
    nlohmann::json last = deleted ? event.object : *event.previous;
    last["metadata"]["resourceVersion"] = std::to_string(event.revision);
    out += eventLine("DELETED", present(last));
  }

  // The object as requested: its version, then a Table or PartialObjectMetadata when asked.
  nlohmann::json present(const nlohmann::json& stored) {
    nlohmann::json object = rest::asRequested(stored, settings_.info);
    switch (settings_.output.kind) {
      case rest::OutputFormat::Kind::kTable: {
        const std::string rv = core::nestedString(object, {"metadata", "resourceVersion"});
        nlohmann::json table =
            settings_.table ? settings_.table(object, rv)
                            : rest::toTable(settings_.info, {object}, rv,
                                            settings_.output.meta_version, settings_.include,
                                            std::chrono::system_clock::now());
        // response.go watchEmbeddedEncoder: headers on the first object only (NoHeaders after).
        if (table_headers_sent_) table["columnDefinitions"] = nullptr;
        table_headers_sent_ = true;
        return table;
      }
      case rest::OutputFormat::Kind::kPartialObjectMetadata:
        return rest::toPartialObjectMetadata(object, settings_.output.meta_version);
      case rest::OutputFormat::Kind::kObject:
        break;
    }
    return object;
  }

  std::string bookmark(bool initial_events_end) {
    nlohmann::json object = rest::asRequested(nlohmann::json::object(), settings_.info);
    std::uint64_t revision = 0;
    {
      std::lock_guard lock(mutex_);
      revision = last_revision_;
    }
    object["metadata"] = {{"resourceVersion", std::to_string(revision)}};
    if (initial_events_end) {
      object["metadata"]["annotations"] = {{std::string(kInitialEventsEnd), "true"}};
    }
    return eventLine("BOOKMARK", object);
  }

  static std::string eventLine(std::string_view type, const nlohmann::json& object) {
    return nlohmann::json{{"type", type}, {"object", object}}.dump() + "\n";
  }

  const Settings settings_;
  // Used by pull() only (the connection's thread).
  bool table_headers_sent_ = false;
  bool initial_end_sent_ = false;
  // Unset until the replay is out; then the next bookmark's time, or none.
  std::optional<std::optional<std::chrono::steady_clock::time_point>> next_bookmark_;

  std::mutex mutex_;
  std::deque<StoreEventPtr> queue_;
  std::size_t replayed_left_ = 0;
  std::uint64_t last_revision_ = 0;
  std::optional<core::Status> error_;
  std::function<void()> wake_;
  bool cancelled_ = false;
  bool overflowed_ = false;
  // Last: destroyed first, so that no push() runs on a half-destroyed stream.
  std::unique_ptr<StoreSubscription> subscription_;
};

// metainternalversion.ListOptions as DecodeParameters reads a watch's query.
struct WatchOptions {
  std::string resource_version;
  std::string resource_version_match;
  std::optional<bool> send_initial_events;
  bool allow_watch_bookmarks = false;
  std::optional<std::int64_t> timeout_seconds;
};

// runtime/conversion.go Convert_Slice_string_To_bool: only "0" and "false" (any case) are false.
bool queryBool(const std::string& value) {
  std::string lower = value;
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return !(value == "0" || lower == "false");
}

rest::Decoded<WatchOptions> decodeWatchOptions(const rest::QueryValues& query) {
  rest::Decoded<WatchOptions> out;
  WatchOptions options;
  options.resource_version = query.get("resourceVersion").value_or("");
  options.resource_version_match = query.get("resourceVersionMatch").value_or("");
  if (auto value = query.get("sendInitialEvents")) options.send_initial_events = queryBool(*value);
  if (auto value = query.get("allowWatchBookmarks")) {
    options.allow_watch_bookmarks = queryBool(*value);
  }
  if (auto value = query.get("timeoutSeconds")) {
    auto parsed = go::parseInt(*value, 10, 64);
    if (!parsed) {
      out.error = core::newBadRequest(parsed.error().message);
      return out;
    }
    options.timeout_seconds = *parsed;
  }
  // internalversion SetListOptionsDefaults with the WatchList gate on.
  if (!options.send_initial_events && options.resource_version_match.empty() &&
      (options.resource_version.empty() || options.resource_version == "0")) {
    options.send_initial_events = true;
    options.resource_version_match = "NotOlderThan";
  }
  // internalversion/validation ValidateListOptions -> validateWatchOptions.
  core::FieldErrors errors;
  const std::string& match = options.resource_version_match;
  if (options.send_initial_events && match != "NotOlderThan") {
    errors.push_back(core::FieldError::forbidden(
        "resourceVersionMatch", "sendInitialEvents requires setting resourceVersionMatch to "
                                "NotOlderThan"));
  }
  if (!match.empty()) {
    if (!options.send_initial_events) {
      errors.push_back(core::FieldError::forbidden(
          "resourceVersionMatch",
          "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"));
    }
    if (match != "NotOlderThan") {
      errors.push_back(core::FieldError::notSupported("resourceVersionMatch", match,
                                                      {"NotOlderThan"}));
    }
    if (query.get("continue").value_or("") != "") {
      errors.push_back(core::FieldError::forbidden(
          "resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"));
    }
  }
  if (!errors.empty()) {
    out.error = core::newInvalid({"meta.k8s.io", "ListOptions"}, "", errors);
    return out;
  }
  out.value = std::move(options);
  return out;
}

net::Response streamResponse(std::shared_ptr<WatchStream> stream) {
  net::Response response;
  response.status = 200;
  response.headers.set("Content-Type", "application/json");
  response.stream = std::move(stream);
  return response;
}

}  // namespace

net::Response RestApiHandler::Impl::watch(const Call& call) {
  auto decoded = decodeWatchOptions(call.query);
  if (decoded.error) return rest::statusResponse(*decoded.error);
  const WatchOptions& options = *decoded.value;

  WatchStream::Settings settings;
  settings.info = call.main;
  if (call.crd && chain.options().custom_resources.table) {
    // When kube-cel fails, the row of a CRD without columns (Name, Age), not a broken stream.
    rest::Call detached = call;  // the stream outlives the request
    detached.http = nullptr;
    detached.admitted = nullptr;
    settings.table = [this, call = std::move(detached)](const nlohmann::json& object,
                                                        const std::string& rv) {
      auto table = tableOf(call, {object}, rv);
      if (auto* converted = std::get_if<nlohmann::json>(&table)) return std::move(*converted);
      return rest::toTable(call.main, {object}, rv, call.output.meta_version,
                           rest::parseIncludeObject(call.query.get("includeObject").value_or("")),
                           std::chrono::system_clock::now());
    };
  }
  settings.output = call.output;
  settings.include = rest::parseIncludeObject(call.query.get("includeObject").value_or(""));
  settings.namespace_name = call.namespace_name;
  settings.bookmarks = options.allow_watch_bookmarks;
  // Unset only with a resourceVersion given (the defaults set it otherwise): no initial events.
  const bool initial_events = options.send_initial_events.value_or(false);
  settings.initial_events_end = options.allow_watch_bookmarks && initial_events;
  settings.bookmark_interval = this->options.watch_bookmark_interval;

  auto labels = rest::parseLabelSelector(call.query.get("labelSelector").value_or(""));
  if (!labels) return rest::statusResponse(core::newBadRequest(labels.error().message));
  settings.labels = std::move(*labels);
  auto fields = rest::parseFieldSelector(call.query.get("fieldSelector").value_or(""));
  if (!fields) return rest::statusResponse(core::newBadRequest(fields.error().message));
  if (auto checked = rest::checkFieldLabels(call.main.kind.group, call.main.kind.kind, *fields);
      !checked) {
    return rest::statusResponse(core::newBadRequest(checked.error().message));
  }
  // get.go listOpts: a watch of one object (the legacy /watch/.../<name> path) selects its name.
  if (!call.info.name.empty()) {
    bool named = fields->empty();
    for (const auto& requirement : *fields) {
      named = requirement.field == "metadata.name" && requirement.equals &&
              requirement.value == call.info.name && fields->size() == 1;
    }
    if (!named) {
      return rest::statusResponse(
          core::newBadRequest("fieldSelector metadata.name doesn't match requested name"));
    }
    if (fields->empty()) fields->push_back({"metadata.name", true, call.info.name});
  }
  settings.fields = std::move(*fields);

  // APIObjectVersioner.ParseResourceVersion: "" and "0" are 0; anything else a uint64, or a
  // storage.InvalidError, which reaches the client as a 500 with its text (ErrorToAPIStatus).
  std::uint64_t requested = 0;
  if (!options.resource_version.empty() && options.resource_version != "0") {
    auto parsed = go::parseUint(options.resource_version, 10, 64);
    if (!parsed) {
      core::Status status;
      status.status = std::string(core::kStatusFailure);
      status.code = 500;
      status.message = core::FieldError::invalid("resourceVersion", options.resource_version,
                                                 parsed.error().message)
                           .toString();
      return rest::statusResponse(status);
    }
    requested = *parsed;
  }

  // handleWatch: timeoutSeconds, else minRequestTimeout (1800 s) times a random 1 to 2.
  const auto now = std::chrono::steady_clock::now();
  std::chrono::milliseconds timeout{0};
  if (options.timeout_seconds && *options.timeout_seconds != 0) {
    const std::int64_t seconds = std::clamp<std::int64_t>(*options.timeout_seconds, -1, 1LL << 40);
    timeout = std::chrono::seconds(seconds);
  } else {
    thread_local std::mt19937_64 random{std::random_device{}()};
    timeout = std::chrono::milliseconds(
        1'800'000 + static_cast<std::int64_t>(random() % 1'800'000));
  }
  settings.deadline = now + timeout;

  auto stream = std::make_shared<WatchStream>(std::move(settings));
  // cacher.go Watch: which events, from where.
  std::optional<std::uint64_t> since;
  const std::uint64_t current = store.revision();
  if (initial_events) {
    // waitUntilFreshLocked: the cache waits (3 s) for a newer revision, then gives up
    // (storage.NewTooLargeResourceVersionError); the simulator's store is never behind, so it
    // gives up at once.
    if (requested > current) {
      core::Status status = core::newTimeoutError(
          fmt::format("Too large resource version: {}, current: {}", requested, current), 1);
      status.details->causes.push_back({"ResourceVersionTooLarge", "Too large resource version",
                                        ""});
      stream->fail(status);
      return streamResponse(std::move(stream));
    }
  } else {
    // 0 with sendInitialEvents=false: from now on.
    since = requested == 0 ? std::numeric_limits<std::uint64_t>::max() : requested;
  }

  std::vector<core::GroupResource> resources = {call.groupResource()};
  for (const auto& equivalent : core::equivalentResources(call.main.resource)) {
    const core::GroupResource gr{equivalent.resource.group, equivalent.resource.resource};
    const bool known = std::any_of(resources.begin(), resources.end(), [&](const auto& r) {
      return r.group == gr.group && r.resource == gr.resource;
    });
    if (!known) resources.push_back(gr);
  }
  auto started = store.watch(std::move(resources), since, [raw = stream.get()](
                                                              const StoreEventPtr& event) {
    raw->push(event);
  });
  if (auto* status = std::get_if<core::Status>(&started)) {
    stream->fail(*status);
  } else {
    stream->begin(std::move(std::get<WatchStart>(started)));
  }
  return streamResponse(std::move(stream));
}

}  // namespace harness::sim
