// Istio's injection template functions (istio/istio pkg/kube/inject/template.go) and a
// rendering of a fragment written the way manifests/charts/istio-control/istio-discovery/files/
// injection-template.yaml is.

#include <gtest/gtest.h>

#include "harness/gotemplate/go_json.h"
#include "render.h"

namespace harness::gotemplate {
namespace {

using nlohmann::json;
using testing::render;

std::string istio(std::string_view text, const json& data = nullptr, Environment env = {}) {
  return render(text, data, istioFuncMap(std::move(env)), istioExecOptions());
}

const json kMeta = {
    {"ObjectMeta",
     {{"name", "p"},
      {"annotations", {{"present", "yes"}, {"blank", ""}}},
      {"labels", {{"app", "hello"}}}}},
    {"port", 15020.0},
};

TEST(Istio, AnnotationReturnsAPresentValueEvenWhenEmpty) {
  EXPECT_EQ(istio("[{{ annotation .ObjectMeta \"present\" \"d\" }}][{{ annotation .ObjectMeta "
                  "\"blank\" \"d\" }}]",
                  kMeta),
            "[yes][]");
}

TEST(Istio, AnnotationFormatsTheDefaultWithFmt) {
  EXPECT_EQ(istio("{{ annotation .ObjectMeta \"a\" .port }} {{ annotation .ObjectMeta \"a\" .nope }}",
                  kMeta),
            "15020 <nil>");
}

TEST(Istio, AnnotationNeedsObjectMeta) {
  EXPECT_EQ(istio("{{ annotation .nope \"a\" \"d\" }}", kMeta),
            "ERR: template: t:1:14: executing \"t\" at <.nope>: invalid value; expected "
            "v1.ObjectMeta");
}

TEST(Istio, IssetTellsPresenceOfAKey) {
  EXPECT_EQ(istio("{{ isset .ObjectMeta.Annotations \"blank\" }} {{ isset .ObjectMeta.Annotations "
                  "\"zz\" }}",
                  kMeta),
            "true false");
}

TEST(Istio, ValueOrDefaultReplacesOnlyEmptyStringAndNil) {
  EXPECT_EQ(istio("{{ valueOrDefault \"\" \"d\" }} {{ valueOrDefault .nope \"d\" }} "
                  "{{ valueOrDefault 0 \"d\" }} {{ valueOrDefault false \"d\" }} "
                  "{{ valueOrDefault \"v\" \"d\" }}",
                  kMeta),
            "d d 0 false v");
}

TEST(Istio, ExcludeInboundPortAppendsTheStatusPort) {
  EXPECT_EQ(istio("{{ excludeInboundPort 15020 \"\" }}|{{ excludeInboundPort \"15020\" \"4,5,6\" }}|"
                  "{{ excludeInboundPort 15020 \"15020,1\" }}|{{ excludeInboundPort \"0\" \"1\" }}|"
                  "{{ excludeInboundPort \" 123 \" \" 4 , ,5 \" }}|{{ excludeInboundPort .port \"\" }}",
                  kMeta),
            "15020|4,5,6,15020|15020,1|1|4,5,123|15020");
}

TEST(Istio, IncludeInboundAndApplicationPorts) {
  const json data = {{"Spec",
                      {{"containers",
                        {{{"name", "app"},
                          {"ports", {{{"containerPort", 80}}, {{"containerPort", 53}, {"protocol", "UDP"}}}}},
                         {{"name", "istio-proxy"}, {"ports", {{{"containerPort", 15090}}}}}}}}}};
  EXPECT_EQ(istio("{{ includeInboundPorts .Spec.Containers }}|{{ applicationPorts .Spec.Containers }}",
                  data),
            "80,15090|80");
}

TEST(Istio, ToJsonOfAStringMapIsSortedAndHtmlEscaped) {
  EXPECT_EQ(istio("{{ toJSON .ObjectMeta.Annotations }} {{ toJSON .nope }}",
                  json{{"ObjectMeta", {{"annotations", {{"b", "<x>"}, {"a", "1"}}}}}}),
            R"({"a":"1","b":"\u003cx\u003e"} {})");
}

TEST(Istio, FromJsonDecodesOrGivesTheStringBraces) {
  EXPECT_EQ(istio("{{ range $k, $v := fromJSON \"{\\\"b\\\":2,\\\"a\\\":1}\" }}{{ $k }}={{ $v }};"
                  "{{ end }} {{ fromJSON \"not json\" }}"),
            "a=1;b=2; {}");
}

TEST(Istio, StructToJsonKeepsContainerPortFieldOrder) {
  EXPECT_EQ(istio("{{ structToJSON .p }} {{ structToJSON .nope }}",
                  json{{"p", {{"protocol", "TCP"}, {"name", "http"}, {"containerPort", 8080},
                              {"hostPort", 0}}}}),
            R"({"name":"http","containerPort":8080,"protocol":"TCP"} {})");
}

TEST(Istio, ProtoToJsonDropsMeshDefaults) {
  const json pc = {{"configPath", "./etc/istio/proxy"},
                   {"binaryPath", "/usr/local/bin/envoy"},
                   {"serviceCluster", "istio-proxy"},
                   {"drainDuration", "45s"},
                   {"discoveryAddress", "istiod.istio-system.svc:15012"},
                   {"proxyAdminPort", 15000},
                   {"statusPort", 15020},
                   {"statNameLength", 189},
                   {"concurrency", 2},
                   {"controlPlaneAuthPolicy", "MUTUAL_TLS"},
                   {"tracing", {{"zipkin", {{"address", "zipkin.istio-system:9411"}}}}},
                   {"proxyMetadata", json::object()}};
  EXPECT_EQ(istio("{{ protoToJSON .pc }}", json{{"pc", pc}}), "{}");
}

TEST(Istio, ProtoToJsonOmitsProto3ZeroValuesEvenWhenSpelledOut) {
  // protojson writes no zero scalar, enum, list or map; set wrappers, set messages and the
  // cluster_name oneof are written whatever their value.
  const json pc = {{"interceptionMode", "REDIRECT"},
                   {"controlPlaneAuthPolicy", "NONE"},
                   {"statusPort", 0},
                   {"meshId", ""},
                   {"extraStatTags", json::array()},
                   {"runtimeValues", json::object()},
                   {"holdApplicationUntilProxyStarts", false},
                   {"concurrency", 0},
                   {"tracing", json::object()},
                   {"tracingServiceName", "APP_LABEL_AND_NAMESPACE"}};
  EXPECT_EQ(istio("{{ protoToJSON .pc }}", json{{"pc", pc}}),
            R"({"tracingServiceName":"APP_LABEL_AND_NAMESPACE","concurrency":0,"tracing":{},)"
            R"("holdApplicationUntilProxyStarts":false})");
  EXPECT_EQ(istio("{{ protoToJSON .pc }}", json{{"pc", {{"interceptionMode", "TPROXY"}}}}),
            R"({"interceptionMode":"TPROXY"})");
}

TEST(Istio, UnsetProtoFieldsReadAsGoSeesThem) {
  // The reads Istio's templates make of ProxyConfig and MeshConfig, on a ProxyConfig and a
  // MeshConfig that set nothing. The expected texts are Go's: text/template with Sprig over
  // istio.io/api's *v1alpha1.ProxyConfig and *v1alpha1.MeshConfig (go1.26, sprig v3, istio.io/api
  // v1.31.0-rc.0), and jsonpb for protoToJSON.
  const json data = {{"ProxyConfig", json::object()},
                     {"MeshConfig", json::object()},
                     {"ObjectMeta", {{"annotations", json::object()}}}};
  EXPECT_EQ(istio("{{ .ProxyConfig.InterceptionMode }}|{{ .ProxyConfig.InterceptionMode.String }}|"
                  "{{ .ProxyConfig.GetInterceptionMode }}|"
                  "{{ annotation .ObjectMeta `sidecar.istio.io/interceptionMode` "
                  ".ProxyConfig.InterceptionMode }}|"
                  "{{ eq (annotation .ObjectMeta `sidecar.istio.io/interceptionMode` "
                  ".ProxyConfig.InterceptionMode) `TPROXY` }}",
                  data),
            "REDIRECT|REDIRECT|REDIRECT|REDIRECT|false");
  EXPECT_EQ(istio("{{ .ProxyConfig.HoldApplicationUntilProxyStarts.GetValue }}|"
                  "{{ or .ProxyConfig.HoldApplicationUntilProxyStarts.GetValue `v` }}|"
                  "{{ .ProxyConfig.ControlPlaneAuthPolicy }}|{{ .ProxyConfig.GetTracingServiceName }}|"
                  "{{ .ProxyConfig.ProxyMetadata }}|{{ index .ProxyConfig.ProxyMetadata `X` }}|"
                  "{{ if .ProxyConfig.ProxyMetadata }}set{{ else }}unset{{ end }}",
                  data),
            "false|v|NONE|APP_LABEL_AND_NAMESPACE|map[]||unset");
  EXPECT_EQ(istio("{{ .MeshConfig.ProxyListenPort }}|{{ .MeshConfig.ProxyInboundListenPort }}|"
                  "{{ .MeshConfig.ProxyListenPort | default `15001` }}|"
                  "[{{ .MeshConfig.TrustDomain }}]|"
                  "{{ valueOrDefault .MeshConfig.TrustDomain `cluster.local` }}",
                  data),
            "0|0|15001|[]|cluster.local");
  EXPECT_EQ(istio("{{ if and false .ProxyConfig.GetTracing.GetTlsSettings }}x{{ end }}"
                  "{{ directory .ProxyConfig.GetTracing.GetTlsSettings.GetCaCertificates }}.",
                  data),
            ".");
  // Set values come through, wrappers holding false included.
  const json set = {{"ProxyConfig",
                     {{"interceptionMode", "TPROXY"},
                      {"holdApplicationUntilProxyStarts", false},
                      {"proxyMetadata", {{"X", "1"}}},
                      {"tracing", {{"tlsSettings", {{"caCertificates", "/etc/c/ca.pem"}}}}}}}};
  EXPECT_EQ(istio("{{ .ProxyConfig.InterceptionMode }}|"
                  "{{ .ProxyConfig.HoldApplicationUntilProxyStarts.GetValue }}|"
                  "{{ index .ProxyConfig.ProxyMetadata `X` }}|"
                  "{{ directory .ProxyConfig.GetTracing.GetTlsSettings.GetCaCertificates }}",
                  set),
            "TPROXY|false|1|/etc/c/");
}

TEST(Istio, ProtoToJsonKeepsOtherFieldsWithoutHtmlEscaping) {
  EXPECT_EQ(istio("{{ protoToJSON .pc }}",
                  json{{"pc", {{"statusPort", 15021}, {"proxyMetadata", {{"A", "<b>"}}}}}}),
            R"({"proxyMetadata":{"A":"<b>"},"statusPort":15021})");
  // jsonpb's order is the .proto's declaration order, not the alphabet.
  EXPECT_EQ(istio("{{ protoToJSON .pc }}",
                  json{{"pc", {{"statusPort", 15021}, {"interceptionMode", "TPROXY"},
                               {"discoveryAddress", "d:1"}, {"zz", 1}}}}),
            R"({"discoveryAddress":"d:1","interceptionMode":"TPROXY","statusPort":15021,"zz":1})");
}

TEST(Istio, ToYamlWritesBlockYaml) {
  EXPECT_EQ(istio("{{ toYaml .r }}|{{ toYaml .nope }}",
                  json{{"r", {{"requests", {{"cpu", "100m"}, {"memory", 128.0}}}}}}),
            "requests:\n  cpu: 100m\n  memory: 128\n|null\n");
}

// Istio's toYaml is sigs.k8s.io/yaml.Marshal: go-yaml v2 folds a long string at column 80.
TEST(Istio, ToYamlFoldsLongStringsAsGoYaml) {
  std::string words;
  for (int i = 0; i < 20; ++i) words += "word ";
  words += "end";
  EXPECT_EQ(istio("{{ toYaml .r }}", json{{"r", {{"args", json::array({words})}}}}),
            "args:\n- word word word word word word word word word word word word word word word "
            "word\n  word word word word end\n");
}

TEST(Istio, IndentLeavesTheFirstLineAlone) {
  EXPECT_EQ(istio("{{ indent 2 \"a\\nb\\n\" }}|"), "a\n  b\n  |");
}

TEST(Istio, DirectoryIsThePathUpToTheLastSlash) {
  EXPECT_EQ(istio("{{ directory \"/etc/certs/root.pem\" }}|{{ directory \"root.pem\" }}|"),
            "/etc/certs/||");
}

TEST(Istio, ContainsTakesTheNeedleFirst) {
  EXPECT_EQ(istio("{{ contains \"/\" \"docker.io/proxy\" }} {{ contains \"/\" \"proxyv2\" }}"),
            "true false");
}

TEST(Istio, ToLower) { EXPECT_EQ(istio("{{ toLower \"Deployment\" }}"), "deployment"); }

TEST(Istio, AppendMultusNetworkFlatForm) {
  EXPECT_EQ(istio("{{ appendMultusNetwork \"\" \"istio-cni\" }}|"
                  "{{ appendMultusNetwork \"a, b\" \"istio-cni\" }}|"
                  "{{ appendMultusNetwork \"a, istio-cni\" \"istio-cni\" }}"),
            "istio-cni|a, b, istio-cni|a, istio-cni");
}

TEST(Istio, AppendMultusNetworkJsonForm) {
  EXPECT_EQ(istio(R"({{ appendMultusNetwork `[{"name":"a"}]` "istio-cni" }}|)"
                  R"({{ appendMultusNetwork `[{"name":"istio-cni"}]` "istio-cni" }}|)"
                  R"({{ appendMultusNetwork `[x]` "istio-cni" }})"),
            R"([{"name":"a"}, {"name": "istio-cni"}]|[{"name":"istio-cni"}]|[x])");
}

// The chart's value "default/istio-cni": since istio/istio#55000 (1.25) the JSON form splits it
// into name and namespace and matches an existing entry on both (SplitQualifiedName: up to the
// second "/"); before, it is the name, matched alone. The flat form is the same in both.
TEST(Istio, AppendMultusNetworkNamespaceSplitSince125) {
  const std::string text =
      R"({{ appendMultusNetwork `[{"name":"a"}]` "default/istio-cni" }}|)"
      R"({{ appendMultusNetwork `[{"name":"istio-cni","namespace":"default"}]` )"
      R"("default/istio-cni" }}|)"
      R"({{ appendMultusNetwork `[{"name":"istio-cni"}]` "default/istio-cni" }}|)"
      R"({{ appendMultusNetwork `[{"name":"default/istio-cni"}]` "default/istio-cni" }}|)"
      R"({{ appendMultusNetwork `[{"name":"n","namespace":null}]` "n" }}|)"
      R"({{ appendMultusNetwork `[{"name":"n","namespace":"x"}]` "n" }}|)"
      R"({{ appendMultusNetwork `[]` "a/b/c" }}|)"
      R"({{ appendMultusNetwork "x, default/istio-cni" "default/istio-cni" }})";
  EXPECT_EQ(render(text, nullptr, istioFuncMap({}, {.multus_namespace_split = true})),
            R"([{"name":"a"}, {"name": "istio-cni", "namespace": "default"}]|)"
            R"([{"name":"istio-cni","namespace":"default"}]|)"
            R"([{"name":"istio-cni"}, {"name": "istio-cni", "namespace": "default"}]|)"
            R"([{"name":"default/istio-cni"}, {"name": "istio-cni", "namespace": "default"}]|)"
            R"([{"name":"n","namespace":null}]|)"
            R"([{"name":"n","namespace":"x"}, {"name": "n"}]|)"
            R"([, {"name": "b", "namespace": "a"}]|)"
            "x, default/istio-cni");
  EXPECT_EQ(render(text, nullptr, istioFuncMap({}, {.multus_namespace_split = false})),
            R"([{"name":"a"}, {"name": "default/istio-cni"}]|)"
            R"([{"name":"istio-cni","namespace":"default"}, {"name": "default/istio-cni"}]|)"
            R"([{"name":"istio-cni"}, {"name": "default/istio-cni"}]|)"
            R"([{"name":"default/istio-cni"}]|)"
            R"([{"name":"n","namespace":null}]|)"
            R"([{"name":"n","namespace":"x"}]|)"
            R"([, {"name": "a/b/c"}]|)"
            "x, default/istio-cni");
  // Istio's default is the newest behaviour.
  EXPECT_EQ(istio(R"({{ appendMultusNetwork `[]` "default/istio-cni" }})"),
            R"([, {"name": "istio-cni", "namespace": "default"}])");
}

TEST(Istio, EnvReadsTheInjectedEnvironment) {
  EXPECT_EQ(istio("{{ env \"A\" \"d\" }} {{ env \"EMPTY\" \"d\" }} {{ env \"MISSING\" \"d\" }}",
                  nullptr, Environment{{"A", "set"}, {"EMPTY", ""}}),
            "set d d");
}

TEST(Istio, OmitStrdictMergeMapsAndToJsonMap) {
  EXPECT_EQ(istio("{{ omit .ObjectMeta.Annotations \"present\" }} "
                  "{{ strdict \"k\" \"v\" \"odd\" }} "
                  "{{ mergeMaps (strdict \"a\" \"1\" \"b\" \"1\") (strdict \"b\" \"2\") }} "
                  "{{ toJsonMap .ObjectMeta.Labels (strdict \"x\" \"<y>\") }} {{ toJsonMap }}",
                  kMeta),
            R"(map[blank:] map[k:v odd:] map[a:1 b:2] {"app":"hello","x":"\u003cy\u003e"} null)");
}

TEST(Istio, OmitNilRemovesNullsRecursively) {
  EXPECT_EQ(istio("{{ omitNil .v | toJson }} {{ omitNil .all }}",
                  json{{"v", {{"limits", {{"cpu", nullptr}, {"memory", "500Mi"}}},
                              {"list", {1, nullptr, 3}}}},
                       {"all", {{"a", nullptr}, {"b", {{"x", nullptr}}}}}}),
            R"({"limits":{"memory":"500Mi"},"list":[1,3]} <no value>)");
}

TEST(Istio, FormatDurationPrintsGoDurations) {
  EXPECT_EQ(istio("{{ formatDuration .a }} {{ formatDuration .b }} {{ formatDuration .c }} "
                  "{{ formatDuration .d }} {{ formatDuration .nope }}",
                  json{{"a", "1.5s"}, {"b", {{"seconds", "90"}}}, {"c", "0.0015s"}, {"d", "3600s"}}),
            "1.5s 1m30s 1.5ms 1h0m0s 0s");
}

TEST(Istio, InterfaceFunctionsPassTheStringThrough) {
  EXPECT_EQ(istio("{{ kubevirtInterfaces \"net1\" }} {{ excludeInterfaces \"eth1\" }}"),
            "net1 eth1");
}

// The call Istio's sidecar template makes since 1.30 (injection-template.yaml).
constexpr char kOtelCall[] =
    "{{ otelResourceAttributes .MeshConfig .ObjectMeta.Annotations .ObjectMeta.Labels "
    ".DeploymentMeta.Namespace .Spec.Containers }}";

json otelData(json mesh, json annotations, json labels, json containers) {
  return json{{"MeshConfig", std::move(mesh)},
              {"ObjectMeta", {{"annotations", std::move(annotations)}, {"labels", std::move(labels)}}},
              {"DeploymentMeta", {{"namespace", "shop"}, {"name", "cart"}}},
              {"Spec", {{"containers", std::move(containers)}}}};
}

const json kOtelMesh = {
    {"extensionProviders",
     {{{"name", "zipkin"}, {"zipkin", {{"service", "z"}}}},
      {{"name", "otel"},
       {"opentelemetry", {{"service", "c"}, {"serviceAttributeEnrichment",
                                              "OTEL_SEMANTIC_CONVENTIONS"}}}}}}};

TEST(Istio, OtelResourceAttributesIsEmptyWithoutSemanticConventions) {
  const json app = json::array({{{"name", "app"}, {"image", "shop/cart:1.2"}}});
  // No provider, an opentelemetry provider left at ISTIO_CANONICAL, a nil mesh.
  EXPECT_EQ(istio(kOtelCall, otelData(json::object(), json::object(), json::object(), app)), "");
  EXPECT_EQ(istio(kOtelCall,
                  otelData({{"extensionProviders",
                             {{{"name", "o"}, {"opentelemetry", {{"service", "c"}}}}}}},
                           json::object(), json::object(), app)),
            "");
  EXPECT_EQ(istio(kOtelCall, otelData(nullptr, json::object(), json::object(), app)), "");
}

TEST(Istio, OtelResourceAttributesFollowsTheServiceAttributeFallbacks) {
  const json one = json::array({{{"name", "app"}, {"image", "reg:5000/shop/cart:1.2@sha256:ab"}}});
  EXPECT_EQ(istio(kOtelCall, otelData(kOtelMesh, json::object(), json::object(), one)),
            "service.namespace=shop,service.version=1.2@sha256:ab,"
            "service.instance.id=shop.$(POD_NAME).app");
  // The enum as a number, digest only, tag only, neither.
  json numeric = kOtelMesh;
  numeric["extensionProviders"][1]["opentelemetry"]["serviceAttributeEnrichment"] = 1;
  EXPECT_EQ(istio(kOtelCall, otelData(numeric, json::object(), json::object(),
                                      json::array({{{"name", "a"}, {"image", "x@sha256:cd"}}}))),
            "service.namespace=shop,service.version=sha256:cd,service.instance.id=shop.$(POD_NAME).a");
  EXPECT_EQ(istio(kOtelCall, otelData(kOtelMesh, json::object(), json::object(),
                                      json::array({{{"name", "a"}, {"image", "reg:5000/x"}}}))),
            "service.namespace=shop,service.instance.id=shop.$(POD_NAME).a");
  // Two containers: no image version, the first container names the instance; the label wins
  // over the image.
  const json two = json::array({{{"name", "a"}, {"image", "x:1"}}, {{"name", "b"}, {"image", "y:2"}}});
  EXPECT_EQ(istio(kOtelCall, otelData(kOtelMesh, json::object(), json::object(), two)),
            "service.namespace=shop,service.instance.id=shop.$(POD_NAME).a");
  EXPECT_EQ(istio(kOtelCall, otelData(kOtelMesh, json::object(),
                                      {{"app.kubernetes.io/version", "v7"}}, one)),
            "service.namespace=shop,service.version=v7,service.instance.id=shop.$(POD_NAME).app");
  // The annotations win; empty annotations do not count; no containers, no instance id.
  EXPECT_EQ(istio(kOtelCall,
                  otelData(kOtelMesh,
                           {{"resource.opentelemetry.io/service.namespace", "team"},
                            {"resource.opentelemetry.io/service.version", ""},
                            {"resource.opentelemetry.io/service.instance.id", "i-1"}},
                           {{"app.kubernetes.io/version", "v7"}}, one)),
            "service.namespace=team,service.version=v7,service.instance.id=i-1");
  EXPECT_EQ(istio(kOtelCall, otelData(kOtelMesh, json::object(), json::object(), json::array())),
            "service.namespace=shop");
}

TEST(Istio, OtelResourceAttributesChecksItsArgumentTypes) {
  EXPECT_EQ(istio("{{ otelResourceAttributes . }}", json::object()),
            "ERR: template: t:1:3: executing \"t\" at <otelResourceAttributes>: wrong number of "
            "args for otelResourceAttributes: want 5 got 1");
}

TEST(Istio, IstioOverridesSprigIndentAndSprigStaysForNindent) {
  EXPECT_EQ(istio("{{ indent 2 \"a\\nb\" }}|{{ nindent 2 \"a\\nb\" }}"), "a\n  b|\n  a\n  b");
}

// A fragment in the style of the `sidecar` template (injection-template.yaml), with Istio's
// data shapes: Go field names over Kubernetes JSON, .Values decoded from JSON (float64 numbers).
TEST(Istio, RendersASidecarTemplateFragment) {
  const std::string tmpl = R"TPL({{- define "resources"  }}
  {{- if or (isset .ObjectMeta.Annotations `sidecar.istio.io/proxyCPU`) (isset .ObjectMeta.Annotations `sidecar.istio.io/proxyMemory`) }}
      requests:
        {{ if (isset .ObjectMeta.Annotations `sidecar.istio.io/proxyCPU`) -}}
        cpu: "{{ index .ObjectMeta.Annotations `sidecar.istio.io/proxyCPU` }}"
        {{ end }}
  {{- else }}
    {{- if .Values.global.proxy.resources }}
      {{ toYaml .Values.global.proxy.resources | indent 6 }}
    {{- end }}
  {{- end }}
{{- end }}
{{- $containers := list }}
{{- range $index, $container := .Spec.Containers }}{{ if not (eq $container.Name "istio-proxy") }}{{ $containers = append $containers $container.Name }}{{end}}{{- end}}
metadata:
  labels:
    security.istio.io/tlsMode: {{ index .ObjectMeta.Labels `security.istio.io/tlsMode` | default "istio"  | quote }}
    service.istio.io/canonical-name: {{ index .ObjectMeta.Labels `service.istio.io/canonical-name` | default (index .ObjectMeta.Labels `app.kubernetes.io/name`) | default (index .ObjectMeta.Labels `app`) | default .DeploymentMeta.Name  | quote }}
  annotations: {
    {{- if ge (len $containers) 1 }}
    {{- if not (isset .ObjectMeta.Annotations `kubectl.kubernetes.io/default-logs-container`) }}
    kubectl.kubernetes.io/default-logs-container: "{{ index $containers 0 }}",
    {{- end }}
    {{- end }}
  }
spec:
  containers:
  - name: istio-proxy
  {{- if contains "/" (annotation .ObjectMeta `sidecar.istio.io/proxyImage` .Values.global.proxy.image) }}
    image: "{{ annotation .ObjectMeta `sidecar.istio.io/proxyImage` .Values.global.proxy.image }}"
  {{- else }}
    image: "{{ .ProxyImage }}"
  {{- end }}
    args:
    - proxy
    - sidecar
    - --domain
    - $(POD_NAMESPACE).svc.{{ .Values.global.proxy.clusterDomain }}
    - --proxyLogLevel={{ annotation .ObjectMeta `sidecar.istio.io/logLevel` .Values.global.proxy.logLevel }}
    - --log_output_level={{ annotation .ObjectMeta `sidecar.istio.io/agentLogLevel` .Values.global.logging.level }}
  {{- if .Values.global.logAsJson }}
    - --log_as_json
  {{- end }}
    env:
    - name: CA_ADDR
    {{- if .Values.global.caAddress }}
      value: {{ .Values.global.caAddress }}
    {{- else }}
      value: istiod{{- if not (eq .Values.revision "") }}-{{ .Values.revision }}{{- end }}.{{ .Values.global.istioNamespace }}.svc:15012
    {{- end }}
    - name: PROXY_CONFIG
      value: |
             {{ protoToJSON .ProxyConfig }}
    - name: ISTIO_META_POD_PORTS
      value: |-
        [
        {{- $first := true }}
        {{- range $index1, $c := .Spec.Containers }}
          {{- range $index2, $p := $c.Ports }}
            {{- if (structToJSON $p) }}
            {{if not $first}},{{end}}{{ structToJSON $p }}
            {{- $first = false }}
            {{- end }}
          {{- end}}
        {{- end}}
        ]
    - name: ISTIO_META_APP_CONTAINERS
      value: "{{ $containers | join "," }}"
    - name: ISTIO_META_INTERCEPTION_MODE
      value: "{{ or (index .ObjectMeta.Annotations `sidecar.istio.io/interceptionMode`) .ProxyConfig.InterceptionMode.String }}"
    {{- range $key, $value := .ProxyConfig.ProxyMetadata }}
    - name: {{ $key }}
      value: "{{ $value }}"
    {{- end }}
    {{ if ne (annotation .ObjectMeta `status.sidecar.istio.io/port` .Values.global.proxy.statusPort) `0` }}
    readinessProbe:
      httpGet:
        path: /healthz/ready
        port: 15021
      initialDelaySeconds: {{ annotation .ObjectMeta `readiness.status.sidecar.istio.io/initialDelaySeconds` .Values.global.proxy.readinessInitialDelaySeconds }}
      periodSeconds: {{ annotation .ObjectMeta `readiness.status.sidecar.istio.io/periodSeconds` .Values.global.proxy.readinessPeriodSeconds }}
      timeoutSeconds: 3
    {{ end -}}
    resources:
  {{ template "resources" . }}
  initContainers:
  - name: istio-init
    args:
    - "-d"
    - "15090,15021,{{ excludeInboundPort (annotation .ObjectMeta `status.sidecar.istio.io/port` .Values.global.proxy.statusPort) (annotation .ObjectMeta `traffic.sidecar.istio.io/excludeInboundPorts` .Values.global.proxy.excludeInboundPorts) }}"
)TPL";

  const json values = goJsonNumbers(json::parse(R"({
    "global": {
      "proxy": {
        "image": "proxyv2", "clusterDomain": "cluster.local", "logLevel": "warning",
        "statusPort": 15020, "readinessInitialDelaySeconds": 0, "readinessPeriodSeconds": 15,
        "excludeInboundPorts": "",
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"},
                      "limits": {"cpu": "2000m", "memory": "1024Mi"}}
      },
      "logging": {"level": "default:info"}, "logAsJson": false, "caAddress": "",
      "istioNamespace": "istio-system"
    },
    "revision": ""
  })"));
  const json data = {
      {"ObjectMeta",
       {{"name", "hello-abc"},
        {"labels", {{"app", "hello"}, {"version", "v1"}}},
        {"annotations",
         {{"sidecar.istio.io/logLevel", "debug"},
          {"readiness.status.sidecar.istio.io/periodSeconds", "30"}}}}},
      {"Spec",
       {{"containers",
         {{{"name", "hello"},
           {"image", "hello:1"},
           {"ports", {{{"containerPort", 80}, {"name", "http"}, {"protocol", "TCP"}},
                      {{"containerPort", 9090}}}}},
          {{"name", "sidecar-two"}, {"ports", {{{"containerPort", 53}, {"protocol", "UDP"}}}}}}}}},
      {"ProxyConfig",
       {{"interceptionMode", "REDIRECT"},
        {"discoveryAddress", "istiod.istio-system.svc:15012"},
        {"statusPort", 15020},
        {"proxyMetadata", {{"FOO", "bar"}}}}},
      {"DeploymentMeta", {{"name", "hello"}, {"namespace", "default"}}},
      {"TypeMeta", {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}}},
      {"ProxyImage", "docker.io/istio/proxyv2:1.30.0"},
      {"Values", values},
      {"Revision", ""},
  };

  const std::string expected =
      "\n"
      "metadata:\n"
      "  labels:\n"
      "    security.istio.io/tlsMode: \"istio\"\n"
      "    service.istio.io/canonical-name: \"hello\"\n"
      "  annotations: {\n"
      "    kubectl.kubernetes.io/default-logs-container: \"hello\",\n"
      "  }\n"
      "spec:\n"
      "  containers:\n"
      "  - name: istio-proxy\n"
      "    image: \"docker.io/istio/proxyv2:1.30.0\"\n"
      "    args:\n"
      "    - proxy\n"
      "    - sidecar\n"
      "    - --domain\n"
      "    - $(POD_NAMESPACE).svc.cluster.local\n"
      "    - --proxyLogLevel=debug\n"
      "    - --log_output_level=default:info\n"
      "    env:\n"
      "    - name: CA_ADDR\n"
      "      value: istiod.istio-system.svc:15012\n"
      "    - name: PROXY_CONFIG\n"
      "      value: |\n"
      // REDIRECT is the enum's zero: proto3 JSON leaves it out.
      "             {\"proxyMetadata\":{\"FOO\":\"bar\"}}\n"
      "    - name: ISTIO_META_POD_PORTS\n"
      "      value: |-\n"
      "        [\n"
      "            {\"name\":\"http\",\"containerPort\":80,\"protocol\":\"TCP\"}\n"
      "            ,{\"containerPort\":9090}\n"
      "            ,{\"containerPort\":53,\"protocol\":\"UDP\"}\n"
      "        ]\n"
      "    - name: ISTIO_META_APP_CONTAINERS\n"
      "      value: \"hello,sidecar-two\"\n"
      "    - name: ISTIO_META_INTERCEPTION_MODE\n"
      "      value: \"REDIRECT\"\n"
      "    - name: FOO\n"
      "      value: \"bar\"\n"
      "    \n"
      "    readinessProbe:\n"
      "      httpGet:\n"
      "        path: /healthz/ready\n"
      "        port: 15021\n"
      "      initialDelaySeconds: 0\n"
      "      periodSeconds: 30\n"
      "      timeoutSeconds: 3\n"
      "    resources:\n"
      "  \n"
      "      limits:\n"
      "        cpu: 2000m\n"
      "        memory: 1024Mi\n"
      "      requests:\n"
      "        cpu: 100m\n"
      "        memory: 128Mi\n"
      "      \n"
      "  initContainers:\n"
      "  - name: istio-init\n"
      "    args:\n"
      "    - \"-d\"\n"
      "    - \"15090,15021,15020\"\n";
  EXPECT_EQ(istio(tmpl, data), expected);
}

TEST(Istio, ResourceAnnotationsReplaceValuesResources) {
  const std::string tmpl =
      "{{- if isset .ObjectMeta.Annotations `sidecar.istio.io/proxyCPU` }}\n"
      "  requests:\n"
      "    cpu: \"{{ index .ObjectMeta.Annotations `sidecar.istio.io/proxyCPU` }}\"\n"
      "{{- else }}\n"
      "  {{ toYaml .Values.resources | indent 2 }}\n"
      "{{- end }}";
  const json with_annotation = {
      {"ObjectMeta", {{"annotations", {{"sidecar.istio.io/proxyCPU", "4000m"}}}}},
      {"Values", {{"resources", {{"limits", {{"cpu", "2"}}}}}}}};
  EXPECT_EQ(istio(tmpl, with_annotation), "\n  requests:\n    cpu: \"4000m\"");
  const json without = {{"ObjectMeta", json::object()},
                        {"Values", {{"resources", {{"limits", {{"cpu", "2"}}}}}}}};
  EXPECT_EQ(istio(tmpl, without), "\n  limits:\n    cpu: \"2\"\n  ");
}

}  // namespace
}  // namespace harness::gotemplate
