// normalizeLikeGoEncoding: decode into the Go type and encode again, for the built-in kinds.
//
// The tables below are the json tags of k8s.io/api core/v1, apps/v1 and batch/v1 types.go and
// k8s.io/apimachinery meta/v1 types.go (Kubernetes 1.30-1.33). encoding/json (encode.go
// isEmptyValue) omits an omitempty field only when it is false, 0, "", a nil pointer or
// interface, or an empty slice or map: a struct value is always written, so `resources: {}`,
// `status: {}`, `strategy: {}` appear even when empty, and metav1.Time's MarshalJSON writes its
// zero value as null (`creationTimestamp: null`). Fields without omitempty are written with their
// zero value (null for nil pointers, slices and maps). Decoding null leaves the zero value.
// Structs whose inner layout does not matter here are typed "raw" (kept as they are).

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "harness/sim/defaulting.h"
#include "json_access.h"

namespace harness::sim {
namespace {

using builtin_internal::json;
using builtin_internal::stringMember;

constexpr bool O = true;  // omitempty

struct Field {
  std::string_view name;
  // Type grammar: "*T" pointer, "[]T" slice, "map:T" map of string to T, or a base type:
  // string, int, bool, float, time (metav1.Time), quantity (resource.Quantity),
  // intstr (intstr.IntOrString), raw (any JSON, left as is), or a struct name from the table.
  std::string_view type;
  bool omitempty = false;
};

using StructTable = std::map<std::string_view, std::vector<Field>>;

// corev1.Container's fields, in Go's declaration order, followed by `extra`.
std::vector<Field> containerFields(std::vector<Field> extra = {}) {
  std::vector<Field> fields = {
      {"name", "string"},
      {"image", "string", O},
      {"command", "[]string", O},
      {"args", "[]string", O},
      {"workingDir", "string", O},
      {"ports", "[]ContainerPort", O},
      {"envFrom", "[]EnvFromSource", O},
      {"env", "[]EnvVar", O},
      {"resources", "ResourceRequirements", O},
      {"resizePolicy", "[]ContainerResizePolicy", O},
      {"restartPolicy", "*string", O},
      {"volumeMounts", "[]VolumeMount", O},
      {"volumeDevices", "[]VolumeDevice", O},
      {"livenessProbe", "*Probe", O},
      {"readinessProbe", "*Probe", O},
      {"startupProbe", "*Probe", O},
      {"lifecycle", "*Lifecycle", O},
      {"terminationMessagePath", "string", O},
      {"terminationMessagePolicy", "string", O},
      {"imagePullPolicy", "string", O},
      {"securityContext", "*SecurityContext", O},
      {"stdin", "bool", O},
      {"stdinOnce", "bool", O},
      {"tty", "bool", O},
  };
  fields.insert(fields.end(), extra.begin(), extra.end());
  return fields;
}

const StructTable& structTable() {
  static const StructTable table = {
      // ---- meta/v1
      {"ObjectMeta",
       {{"name", "string", O}, {"generateName", "string", O}, {"namespace", "string", O},
        {"selfLink", "string", O}, {"uid", "string", O}, {"resourceVersion", "string", O},
        {"generation", "int", O}, {"creationTimestamp", "time", O},
        {"deletionTimestamp", "*time", O}, {"deletionGracePeriodSeconds", "*int", O},
        {"labels", "map:string", O}, {"annotations", "map:string", O},
        {"ownerReferences", "[]OwnerReference", O}, {"finalizers", "[]string", O},
        {"managedFields", "[]ManagedFieldsEntry", O}}},
      {"OwnerReference",
       {{"apiVersion", "string"}, {"kind", "string"}, {"name", "string"}, {"uid", "string"},
        {"controller", "*bool", O}, {"blockOwnerDeletion", "*bool", O}}},
      {"ManagedFieldsEntry",
       {{"manager", "string", O}, {"operation", "string", O}, {"apiVersion", "string", O},
        {"time", "*time", O}, {"fieldsType", "string", O}, {"fieldsV1", "*raw", O},
        {"subresource", "string", O}}},
      {"LabelSelector",
       {{"matchLabels", "map:string", O},
        {"matchExpressions", "[]LabelSelectorRequirement", O}}},
      {"LabelSelectorRequirement",
       {{"key", "string"}, {"operator", "string"}, {"values", "[]string", O}}},

      // ---- core/v1 Pod
      {"Pod",
       {{"apiVersion", "string", O}, {"kind", "string", O}, {"metadata", "ObjectMeta", O},
        {"spec", "PodSpec", O}, {"status", "PodStatus", O}}},
      {"PodSpec",
       {{"volumes", "[]Volume", O},
        {"initContainers", "[]Container", O},
        {"containers", "[]Container"},
        {"ephemeralContainers", "[]EphemeralContainer", O},
        {"restartPolicy", "string", O},
        {"terminationGracePeriodSeconds", "*int", O},
        {"activeDeadlineSeconds", "*int", O},
        {"dnsPolicy", "string", O},
        {"nodeSelector", "map:string", O},
        {"serviceAccountName", "string", O},
        {"serviceAccount", "string", O},
        {"automountServiceAccountToken", "*bool", O},
        {"nodeName", "string", O},
        {"hostNetwork", "bool", O},
        {"hostPID", "bool", O},
        {"hostIPC", "bool", O},
        {"shareProcessNamespace", "*bool", O},
        {"securityContext", "*PodSecurityContext", O},
        {"imagePullSecrets", "[]LocalObjectReference", O},
        {"hostname", "string", O},
        {"subdomain", "string", O},
        {"affinity", "*raw", O},
        {"schedulerName", "string", O},
        {"tolerations", "[]Toleration", O},
        {"hostAliases", "[]HostAlias", O},
        {"priorityClassName", "string", O},
        {"priority", "*int", O},
        {"dnsConfig", "*raw", O},
        {"readinessGates", "[]raw", O},
        {"runtimeClassName", "*string", O},
        {"enableServiceLinks", "*bool", O},
        {"preemptionPolicy", "*string", O},
        {"overhead", "map:quantity", O},
        {"topologySpreadConstraints", "[]raw", O},
        {"setHostnameAsFQDN", "*bool", O},
        {"os", "*raw", O},
        {"hostUsers", "*bool", O},
        {"schedulingGates", "[]raw", O},
        {"resourceClaims", "[]raw", O},
        {"resources", "*ResourceRequirements", O}}},
      {"PodSecurityContext",
       {{"seLinuxOptions", "*raw", O}, {"windowsOptions", "*raw", O},
        {"runAsUser", "*int", O}, {"runAsGroup", "*int", O}, {"runAsNonRoot", "*bool", O},
        {"supplementalGroups", "[]int", O}, {"supplementalGroupsPolicy", "*string", O},
        {"fsGroup", "*int", O}, {"sysctls", "[]raw", O}, {"fsGroupChangePolicy", "*string", O},
        {"seccompProfile", "*raw", O}, {"appArmorProfile", "*raw", O},
        {"seLinuxChangePolicy", "*string", O}}},
      {"PodStatus",
       {{"observedGeneration", "int", O}, {"phase", "string", O}, {"conditions", "[]raw", O},
        {"message", "string", O}, {"reason", "string", O}, {"nominatedNodeName", "string", O},
        {"hostIP", "string", O}, {"hostIPs", "[]raw", O}, {"podIP", "string", O},
        {"podIPs", "[]raw", O}, {"startTime", "*time", O},
        {"initContainerStatuses", "[]raw", O}, {"containerStatuses", "[]raw", O},
        {"qosClass", "string", O}, {"ephemeralContainerStatuses", "[]raw", O},
        {"resize", "string", O}, {"resourceClaimStatuses", "[]raw", O}}},
      {"Container", containerFields()},
      {"ContainerPort",
       {{"name", "string", O}, {"hostPort", "int", O}, {"containerPort", "int"},
        {"protocol", "string", O}, {"hostIP", "string", O}}},
      {"EnvFromSource",
       {{"prefix", "string", O}, {"configMapRef", "*LocalOptionalReference", O},
        {"secretRef", "*LocalOptionalReference", O}}},
      {"LocalOptionalReference", {{"name", "string", O}, {"optional", "*bool", O}}},
      {"EnvVar", {{"name", "string"}, {"value", "string", O}, {"valueFrom", "*EnvVarSource", O}}},
      {"EnvVarSource",
       {{"fieldRef", "*ObjectFieldSelector", O},
        {"resourceFieldRef", "*ResourceFieldSelector", O},
        {"configMapKeyRef", "*KeySelector", O},
        {"secretKeyRef", "*KeySelector", O}}},
      {"ObjectFieldSelector", {{"apiVersion", "string", O}, {"fieldPath", "string"}}},
      {"ResourceFieldSelector",
       {{"containerName", "string", O}, {"resource", "string"}, {"divisor", "quantity", O}}},
      {"KeySelector", {{"name", "string", O}, {"key", "string"}, {"optional", "*bool", O}}},
      {"ResourceRequirements",
       {{"limits", "map:quantity", O}, {"requests", "map:quantity", O}, {"claims", "[]raw", O}}},
      {"ContainerResizePolicy", {{"resourceName", "string"}, {"restartPolicy", "string"}}},
      {"VolumeMount",
       {{"name", "string"}, {"readOnly", "bool", O}, {"recursiveReadOnly", "*string", O},
        {"mountPath", "string"}, {"subPath", "string", O}, {"mountPropagation", "*string", O},
        {"subPathExpr", "string", O}}},
      {"VolumeDevice", {{"name", "string"}, {"devicePath", "string"}}},
      {"Probe",
       {{"exec", "*ExecAction", O}, {"httpGet", "*HTTPGetAction", O},
        {"tcpSocket", "*TCPSocketAction", O}, {"grpc", "*GRPCAction", O},
        {"initialDelaySeconds", "int", O}, {"timeoutSeconds", "int", O},
        {"periodSeconds", "int", O}, {"successThreshold", "int", O},
        {"failureThreshold", "int", O}, {"terminationGracePeriodSeconds", "*int", O}}},
      {"ExecAction", {{"command", "[]string", O}}},
      {"HTTPGetAction",
       {{"path", "string", O}, {"port", "intstr"}, {"host", "string", O},
        {"scheme", "string", O}, {"httpHeaders", "[]HTTPHeader", O}}},
      {"HTTPHeader", {{"name", "string"}, {"value", "string"}}},
      {"TCPSocketAction", {{"port", "intstr"}, {"host", "string", O}}},
      {"GRPCAction", {{"port", "int"}, {"service", "*string"}}},
      {"Lifecycle",
       {{"postStart", "*LifecycleHandler", O}, {"preStop", "*LifecycleHandler", O},
        {"stopSignal", "*string", O}}},
      {"LifecycleHandler",
       {{"exec", "*ExecAction", O}, {"httpGet", "*HTTPGetAction", O},
        {"tcpSocket", "*TCPSocketAction", O}, {"sleep", "*SleepAction", O}}},
      {"SleepAction", {{"seconds", "int"}}},
      {"SecurityContext",
       {{"capabilities", "*Capabilities", O}, {"privileged", "*bool", O},
        {"seLinuxOptions", "*raw", O}, {"windowsOptions", "*raw", O},
        {"runAsUser", "*int", O}, {"runAsGroup", "*int", O}, {"runAsNonRoot", "*bool", O},
        {"readOnlyRootFilesystem", "*bool", O}, {"allowPrivilegeEscalation", "*bool", O},
        {"procMount", "*string", O}, {"seccompProfile", "*raw", O},
        {"appArmorProfile", "*raw", O}}},
      {"Capabilities", {{"add", "[]string", O}, {"drop", "[]string", O}}},
      {"LocalObjectReference", {{"name", "string", O}}},
      {"Toleration",
       {{"key", "string", O}, {"operator", "string", O}, {"value", "string", O},
        {"effect", "string", O}, {"tolerationSeconds", "*int", O}}},
      {"HostAlias", {{"ip", "string", O}, {"hostnames", "[]string", O}}},
      {"Volume",
       {{"name", "string"},
        {"hostPath", "*HostPathVolumeSource", O},
        {"emptyDir", "*EmptyDirVolumeSource", O},
        {"gcePersistentDisk", "*raw", O},
        {"awsElasticBlockStore", "*raw", O},
        {"gitRepo", "*raw", O},
        {"secret", "*SecretVolumeSource", O},
        {"nfs", "*raw", O},
        {"iscsi", "*raw", O},
        {"glusterfs", "*raw", O},
        {"persistentVolumeClaim", "*PersistentVolumeClaimVolumeSource", O},
        {"rbd", "*raw", O},
        {"flexVolume", "*raw", O},
        {"cinder", "*raw", O},
        {"cephfs", "*raw", O},
        {"flocker", "*raw", O},
        {"downwardAPI", "*DownwardAPIVolumeSource", O},
        {"fc", "*raw", O},
        {"azureFile", "*raw", O},
        {"configMap", "*ConfigMapVolumeSource", O},
        {"vsphereVolume", "*raw", O},
        {"quobyte", "*raw", O},
        {"azureDisk", "*raw", O},
        {"photonPersistentDisk", "*raw", O},
        {"projected", "*ProjectedVolumeSource", O},
        {"portworxVolume", "*raw", O},
        {"scaleIO", "*raw", O},
        {"storageos", "*raw", O},
        {"csi", "*raw", O},
        {"ephemeral", "*EphemeralVolumeSource", O},
        {"image", "*raw", O}}},
      {"HostPathVolumeSource", {{"path", "string"}, {"type", "*string", O}}},
      {"EmptyDirVolumeSource", {{"medium", "string", O}, {"sizeLimit", "*quantity", O}}},
      {"SecretVolumeSource",
       {{"secretName", "string", O}, {"items", "[]KeyToPath", O}, {"defaultMode", "*int", O},
        {"optional", "*bool", O}}},
      {"ConfigMapVolumeSource",
       {{"name", "string", O}, {"items", "[]KeyToPath", O}, {"defaultMode", "*int", O},
        {"optional", "*bool", O}}},
      {"KeyToPath", {{"key", "string"}, {"path", "string"}, {"mode", "*int", O}}},
      {"PersistentVolumeClaimVolumeSource", {{"claimName", "string"}, {"readOnly", "bool", O}}},
      {"DownwardAPIVolumeSource",
       {{"items", "[]DownwardAPIVolumeFile", O}, {"defaultMode", "*int", O}}},
      {"DownwardAPIVolumeFile",
       {{"path", "string"}, {"fieldRef", "*ObjectFieldSelector", O},
        {"resourceFieldRef", "*ResourceFieldSelector", O}, {"mode", "*int", O}}},
      {"ProjectedVolumeSource", {{"sources", "[]VolumeProjection"}, {"defaultMode", "*int", O}}},
      {"VolumeProjection",
       {{"secret", "*ProjectionItems", O}, {"downwardAPI", "*DownwardAPIProjection", O},
        {"configMap", "*ProjectionItems", O},
        {"serviceAccountToken", "*ServiceAccountTokenProjection", O},
        {"clusterTrustBundle", "*raw", O}, {"podCertificate", "*raw", O}}},
      {"ProjectionItems",
       {{"name", "string", O}, {"items", "[]KeyToPath", O}, {"optional", "*bool", O}}},
      {"DownwardAPIProjection", {{"items", "[]DownwardAPIVolumeFile", O}}},
      {"ServiceAccountTokenProjection",
       {{"audience", "string", O}, {"expirationSeconds", "*int", O}, {"path", "string"}}},
      {"EphemeralVolumeSource", {{"volumeClaimTemplate", "*PersistentVolumeClaimTemplate", O}}},
      {"PersistentVolumeClaimTemplate",
       {{"metadata", "ObjectMeta", O}, {"spec", "PersistentVolumeClaimSpec"}}},
      {"PersistentVolumeClaimSpec",
       {{"accessModes", "[]string", O}, {"selector", "*LabelSelector", O},
        {"resources", "VolumeResourceRequirements", O}, {"volumeName", "string", O},
        {"storageClassName", "*string", O}, {"volumeMode", "*string", O},
        {"dataSource", "*raw", O}, {"dataSourceRef", "*raw", O},
        {"volumeAttributesClassName", "*string", O}}},
      {"VolumeResourceRequirements",
       {{"limits", "map:quantity", O}, {"requests", "map:quantity", O}}},
      {"PersistentVolumeClaim",
       {{"apiVersion", "string", O}, {"kind", "string", O}, {"metadata", "ObjectMeta", O},
        {"spec", "PersistentVolumeClaimSpec", O}, {"status", "PersistentVolumeClaimStatus", O}}},
      {"PersistentVolumeClaimStatus",
       {{"phase", "string", O}, {"accessModes", "[]string", O},
        {"capacity", "map:quantity", O}, {"conditions", "[]raw", O},
        {"allocatedResources", "map:quantity", O}, {"allocatedResourceStatuses", "map:string", O},
        {"currentVolumeAttributesClassName", "*string", O}, {"modifyVolumeStatus", "*raw", O}}},
      // corev1.EphemeralContainerCommon: Container's fields in the same order.
      {"EphemeralContainer", containerFields({{"targetContainerName", "string", O}})},
      {"PodTemplateSpec", {{"metadata", "ObjectMeta", O}, {"spec", "PodSpec", O}}},

      // ---- core/v1 other kinds
      {"PodTemplate",
       {{"apiVersion", "string", O}, {"kind", "string", O}, {"metadata", "ObjectMeta", O},
        {"template", "PodTemplateSpec", O}}},
      {"ReplicationController",
       {{"apiVersion", "string", O}, {"kind", "string", O}, {"metadata", "ObjectMeta", O},
        {"spec", "ReplicationControllerSpec", O},
        {"status", "ReplicationControllerStatus", O}}},
      {"ReplicationControllerSpec",
       {{"replicas", "*int", O}, {"minReadySeconds", "int", O}, {"selector", "map:string", O},
        {"template", "*PodTemplateSpec", O}}},
      {"ReplicationControllerStatus",
       {{"replicas", "int"}, {"fullyLabeledReplicas", "int", O}, {"readyReplicas", "int", O},
        {"availableReplicas", "int", O}, {"observedGeneration", "int", O},
        {"conditions", "[]raw", O}}},
      {"Service",
       {{"apiVersion", "string", O}, {"kind", "string", O}, {"metadata", "ObjectMeta", O},
        {"spec", "ServiceSpec", O}, {"status", "ServiceStatus", O}}},
      {"ServiceSpec",
       {{"ports", "[]ServicePort", O}, {"selector", "map:string", O},
        {"clusterIP", "string", O}, {"clusterIPs", "[]string", O}, {"type", "string", O},
        {"externalIPs", "[]string", O}, {"sessionAffinity", "string", O},
        {"loadBalancerIP", "string", O}, {"loadBalancerSourceRanges", "[]string", O},
        {"externalName", "string", O}, {"externalTrafficPolicy", "string", O},
        {"healthCheckNodePort", "int", O}, {"publishNotReadyAddresses", "bool", O},
        {"sessionAffinityConfig", "*raw", O}, {"ipFamilies", "[]string", O},
        {"ipFamilyPolicy", "*string", O}, {"allocateLoadBalancerNodePorts", "*bool", O},
        {"loadBalancerClass", "*string", O}, {"internalTrafficPolicy", "*string", O},
        {"trafficDistribution", "*string", O}}},
      {"ServicePort",
       {{"name", "string", O}, {"protocol", "string", O}, {"appProtocol", "*string", O},
        {"port", "int"}, {"targetPort", "intstr", O}, {"nodePort", "int", O}}},
      {"ServiceStatus", {{"loadBalancer", "LoadBalancerStatus", O}, {"conditions", "[]raw", O}}},
      {"LoadBalancerStatus", {{"ingress", "[]raw", O}}},
      {"Namespace",
       {{"apiVersion", "string", O}, {"kind", "string", O}, {"metadata", "ObjectMeta", O},
        {"spec", "NamespaceSpec", O}, {"status", "NamespaceStatus", O}}},
      {"NamespaceSpec", {{"finalizers", "[]string", O}}},
      {"NamespaceStatus", {{"phase", "string", O}, {"conditions", "[]raw", O}}},
      // ---- core/v1 Node: its status always has daemonEndpoints and nodeInfo (struct values, and
      // NodeSystemInfo's strings have no omitempty), as kube-apiserver v1.37.2 answers for a
      // Node created without status (found by `apiserver-sim compare --backend kube`).
      {"Node",
       {{"apiVersion", "string", O}, {"kind", "string", O}, {"metadata", "ObjectMeta", O},
        {"spec", "NodeSpec", O}, {"status", "NodeStatus", O}}},
      {"NodeSpec",
       {{"podCIDR", "string", O}, {"podCIDRs", "[]string", O}, {"providerID", "string", O},
        {"unschedulable", "bool", O}, {"taints", "[]raw", O}, {"configSource", "*raw", O},
        {"externalID", "string", O}}},
      {"NodeStatus",
       {{"capacity", "map:quantity", O}, {"allocatable", "map:quantity", O},
        {"phase", "string", O}, {"conditions", "[]raw", O}, {"addresses", "[]raw", O},
        {"daemonEndpoints", "NodeDaemonEndpoints", O}, {"nodeInfo", "NodeSystemInfo", O},
        {"images", "[]raw", O}, {"volumesInUse", "[]string", O}, {"volumesAttached", "[]raw", O},
        {"config", "*raw", O}, {"runtimeHandlers", "[]raw", O}, {"features", "*raw", O}}},
      {"NodeDaemonEndpoints", {{"kubeletEndpoint", "DaemonEndpoint", O}}},
      {"DaemonEndpoint", {{"Port", "int"}}},
      {"NodeSystemInfo",
       {{"machineID", "string"}, {"systemUUID", "string"}, {"bootID", "string"},
        {"kernelVersion", "string"}, {"osImage", "string"}, {"containerRuntimeVersion", "string"},
        {"kubeletVersion", "string"}, {"kubeProxyVersion", "string"},
        {"operatingSystem", "string"}, {"architecture", "string"}, {"swap", "*raw", O}}},
      {"Secret",
       {{"apiVersion", "string", O}, {"kind", "string", O}, {"metadata", "ObjectMeta", O},
        {"immutable", "*bool", O}, {"data", "map:string", O}, {"stringData", "map:string", O},
        {"type", "string", O}}},
      {"ConfigMap",
       {{"apiVersion", "string", O}, {"kind", "string", O}, {"metadata", "ObjectMeta", O},
        {"immutable", "*bool", O}, {"data", "map:string", O}, {"binaryData", "map:string", O}}},
      {"ServiceAccount",
       {{"apiVersion", "string", O}, {"kind", "string", O}, {"metadata", "ObjectMeta", O},
        {"secrets", "[]ObjectReference", O}, {"imagePullSecrets", "[]LocalObjectReference", O},
        {"automountServiceAccountToken", "*bool", O}}},
      {"ObjectReference",
       {{"kind", "string", O}, {"namespace", "string", O}, {"name", "string", O},
        {"uid", "string", O}, {"apiVersion", "string", O}, {"resourceVersion", "string", O},
        {"fieldPath", "string", O}}},
      {"LimitRange",
       {{"apiVersion", "string", O}, {"kind", "string", O}, {"metadata", "ObjectMeta", O},
        {"spec", "LimitRangeSpec", O}}},
      {"LimitRangeSpec", {{"limits", "[]LimitRangeItem"}}},
      {"LimitRangeItem",
       {{"type", "string"}, {"max", "map:quantity", O}, {"min", "map:quantity", O},
        {"default", "map:quantity", O}, {"defaultRequest", "map:quantity", O},
        {"maxLimitRequestRatio", "map:quantity", O}}},

      // ---- apps/v1
      {"Deployment",
       {{"apiVersion", "string", O}, {"kind", "string", O}, {"metadata", "ObjectMeta", O},
        {"spec", "DeploymentSpec", O}, {"status", "DeploymentStatus", O}}},
      {"DeploymentSpec",
       {{"replicas", "*int", O}, {"selector", "*LabelSelector"},
        {"template", "PodTemplateSpec"}, {"strategy", "DeploymentStrategy", O},
        {"minReadySeconds", "int", O}, {"revisionHistoryLimit", "*int", O},
        {"paused", "bool", O}, {"progressDeadlineSeconds", "*int", O}}},
      {"DeploymentStrategy", {{"type", "string", O}, {"rollingUpdate", "*RollingUpdate", O}}},
      {"RollingUpdate", {{"maxUnavailable", "*intstr", O}, {"maxSurge", "*intstr", O}}},
      {"DeploymentStatus",
       {{"observedGeneration", "int", O}, {"replicas", "int", O}, {"updatedReplicas", "int", O},
        {"readyReplicas", "int", O}, {"availableReplicas", "int", O},
        {"unavailableReplicas", "int", O}, {"terminatingReplicas", "*int", O},
        {"conditions", "[]raw", O}, {"collisionCount", "*int", O}}},
      {"ReplicaSet",
       {{"apiVersion", "string", O}, {"kind", "string", O}, {"metadata", "ObjectMeta", O},
        {"spec", "ReplicaSetSpec", O}, {"status", "ReplicaSetStatus", O}}},
      {"ReplicaSetSpec",
       {{"replicas", "*int", O}, {"minReadySeconds", "int", O},
        {"selector", "*LabelSelector"}, {"template", "PodTemplateSpec", O}}},
      {"ReplicaSetStatus",
       {{"replicas", "int"}, {"fullyLabeledReplicas", "int", O}, {"readyReplicas", "int", O},
        {"availableReplicas", "int", O}, {"terminatingReplicas", "*int", O},
        {"observedGeneration", "int", O}, {"conditions", "[]raw", O}}},
      {"StatefulSet",
       {{"apiVersion", "string", O}, {"kind", "string", O}, {"metadata", "ObjectMeta", O},
        {"spec", "StatefulSetSpec", O}, {"status", "StatefulSetStatus", O}}},
      {"StatefulSetSpec",
       {{"replicas", "*int", O}, {"selector", "*LabelSelector"},
        {"template", "PodTemplateSpec"}, {"volumeClaimTemplates", "[]PersistentVolumeClaim", O},
        {"serviceName", "string"}, {"podManagementPolicy", "string", O},
        {"updateStrategy", "StatefulSetUpdateStrategy", O},
        {"revisionHistoryLimit", "*int", O}, {"minReadySeconds", "int", O},
        {"persistentVolumeClaimRetentionPolicy", "*StatefulSetRetentionPolicy", O},
        {"ordinals", "*StatefulSetOrdinals", O}}},
      {"StatefulSetUpdateStrategy",
       {{"type", "string", O}, {"rollingUpdate", "*RollingUpdateStatefulSet", O}}},
      {"RollingUpdateStatefulSet", {{"partition", "*int", O}, {"maxUnavailable", "*intstr", O}}},
      {"StatefulSetRetentionPolicy", {{"whenDeleted", "string", O}, {"whenScaled", "string", O}}},
      {"StatefulSetOrdinals", {{"start", "int"}}},
      {"StatefulSetStatus",
       {{"observedGeneration", "int", O}, {"replicas", "int"}, {"readyReplicas", "int", O},
        {"currentReplicas", "int", O}, {"updatedReplicas", "int", O},
        {"currentRevision", "string", O}, {"updateRevision", "string", O},
        {"collisionCount", "*int", O}, {"conditions", "[]raw", O},
        {"availableReplicas", "int"}}},
      {"DaemonSet",
       {{"apiVersion", "string", O}, {"kind", "string", O}, {"metadata", "ObjectMeta", O},
        {"spec", "DaemonSetSpec", O}, {"status", "DaemonSetStatus", O}}},
      {"DaemonSetSpec",
       {{"selector", "*LabelSelector"}, {"template", "PodTemplateSpec"},
        {"updateStrategy", "DaemonSetUpdateStrategy", O}, {"minReadySeconds", "int", O},
        {"revisionHistoryLimit", "*int", O}}},
      {"DaemonSetUpdateStrategy", {{"type", "string", O}, {"rollingUpdate", "*RollingUpdate", O}}},
      {"DaemonSetStatus",
       {{"currentNumberScheduled", "int"}, {"numberMisscheduled", "int"},
        {"desiredNumberScheduled", "int"}, {"numberReady", "int"},
        {"observedGeneration", "int", O}, {"updatedNumberScheduled", "int", O},
        {"numberAvailable", "int", O}, {"numberUnavailable", "int", O},
        {"collisionCount", "*int", O}, {"conditions", "[]raw", O}}},

      // ---- batch/v1
      {"Job",
       {{"apiVersion", "string", O}, {"kind", "string", O}, {"metadata", "ObjectMeta", O},
        {"spec", "JobSpec", O}, {"status", "JobStatus", O}}},
      {"JobSpec",
       {{"parallelism", "*int", O}, {"completions", "*int", O},
        {"activeDeadlineSeconds", "*int", O}, {"podFailurePolicy", "*raw", O},
        {"successPolicy", "*raw", O}, {"backoffLimit", "*int", O},
        {"backoffLimitPerIndex", "*int", O}, {"maxFailedIndexes", "*int", O},
        {"selector", "*LabelSelector", O}, {"manualSelector", "*bool", O},
        {"template", "PodTemplateSpec"}, {"ttlSecondsAfterFinished", "*int", O},
        {"completionMode", "*string", O}, {"suspend", "*bool", O},
        {"podReplacementPolicy", "*string", O}, {"managedBy", "*string", O}}},
      {"JobStatus",
       {{"conditions", "[]raw", O}, {"startTime", "*time", O}, {"completionTime", "*time", O},
        {"active", "int", O}, {"succeeded", "int", O}, {"failed", "int", O},
        {"terminating", "*int", O}, {"completedIndexes", "string", O},
        {"failedIndexes", "*string", O}, {"uncountedTerminatedPods", "*raw", O},
        {"ready", "*int", O}}},
      {"CronJob",
       {{"apiVersion", "string", O}, {"kind", "string", O}, {"metadata", "ObjectMeta", O},
        {"spec", "CronJobSpec", O}, {"status", "CronJobStatus", O}}},
      {"CronJobSpec",
       {{"schedule", "string"}, {"timeZone", "*string", O},
        {"startingDeadlineSeconds", "*int", O}, {"concurrencyPolicy", "string", O},
        {"suspend", "*bool", O}, {"jobTemplate", "JobTemplateSpec"},
        {"successfulJobsHistoryLimit", "*int", O}, {"failedJobsHistoryLimit", "*int", O}}},
      {"JobTemplateSpec", {{"metadata", "ObjectMeta", O}, {"spec", "JobSpec", O}}},
      {"CronJobStatus",
       {{"active", "[]ObjectReference", O}, {"lastScheduleTime", "*time", O},
        {"lastSuccessfulTime", "*time", O}}},
  };
  return table;
}

// The root struct of each built-in kind by "<apiVersion>/<kind>".
const std::map<std::string, std::string_view>& rootTypes() {
  static const std::map<std::string, std::string_view> roots = {
      {"v1/Pod", "Pod"},
      {"v1/PodTemplate", "PodTemplate"},
      {"v1/ReplicationController", "ReplicationController"},
      {"v1/Service", "Service"},
      {"v1/Namespace", "Namespace"},
      {"v1/Secret", "Secret"},
      {"v1/Node", "Node"},
      {"v1/ConfigMap", "ConfigMap"},
      {"v1/ServiceAccount", "ServiceAccount"},
      {"v1/LimitRange", "LimitRange"},
      {"v1/PersistentVolumeClaim", "PersistentVolumeClaim"},
      {"apps/v1/Deployment", "Deployment"},
      {"apps/v1/ReplicaSet", "ReplicaSet"},
      {"apps/v1/StatefulSet", "StatefulSet"},
      {"apps/v1/DaemonSet", "DaemonSet"},
      {"batch/v1/Job", "Job"},
      {"batch/v1/CronJob", "CronJob"},
  };
  return roots;
}

bool isPointerLike(std::string_view type) {
  return type.starts_with("*") || type.starts_with("[]") || type.starts_with("map:") ||
         type == "raw";
}

// Types that encoding/json never omits (struct values).
bool isStructValue(std::string_view type) {
  if (isPointerLike(type)) return false;
  return type == "time" || type == "quantity" || type == "intstr" ||
         structTable().count(type) > 0;
}

void normalizeStruct(json& object, std::string_view type);

// The zero value Go writes for a field of this type.
json zeroValue(std::string_view type) {
  if (isPointerLike(type) || type == "time") return nullptr;
  if (type == "string") return "";
  if (type == "int" || type == "float") return 0;
  if (type == "bool") return false;
  if (type == "quantity") return "0";
  if (type == "intstr") return 0;
  json zero = json::object();
  normalizeStruct(zero, type);
  return zero;
}

// encoding/json isEmptyValue for the Go type.
bool isEmptyValue(const json& value, std::string_view type) {
  if (type.starts_with("*") || type == "raw") return value.is_null();
  if (type.starts_with("[]")) return value.is_null() || (value.is_array() && value.empty());
  if (type.starts_with("map:")) return value.is_null() || (value.is_object() && value.empty());
  if (type == "string") return value.is_string() && value.get_ref<const std::string&>().empty();
  if (type == "int" || type == "float") return value.is_number() && value == 0;
  if (type == "bool") return value.is_boolean() && !value.get<bool>();
  return false;
}

void normalizeValue(json& value, std::string_view type) {
  if (type.starts_with("*")) {
    if (!value.is_null()) normalizeValue(value, type.substr(1));
    return;
  }
  if (type.starts_with("[]")) {
    if (value.is_array()) {
      for (auto& element : value) normalizeValue(element, type.substr(2));
    }
    return;
  }
  if (type.starts_with("map:")) {
    if (value.is_object()) {
      for (auto& [key, element] : value.items()) normalizeValue(element, type.substr(4));
    }
    return;
  }
  if (type == "raw" || type == "time") return;
  if (value.is_null()) {
    value = zeroValue(type);
    return;
  }
  if (type == "quantity") {
    if (value.is_number_integer() || value.is_number_unsigned()) value = value.dump();
    return;
  }
  if (structTable().count(type) > 0 && value.is_object()) normalizeStruct(value, type);
}

// v1 <-> internal conversion of PodSpec: DeprecatedServiceAccount is an alias of
// ServiceAccountName (pkg/apis/core/v1/conversion.go Convert_core_PodSpec_To_v1_PodSpec and
// Convert_v1_PodSpec_To_core_PodSpec: the v1 serviceAccount is read only when
// serviceAccountName is empty, and written from ServiceAccountName).
void convertPodSpecAliases(json& spec) {
  std::string name = stringMember(spec, "serviceAccountName");
  if (name.empty()) name = stringMember(spec, "serviceAccount");
  if (name.empty()) {
    spec.erase("serviceAccountName");
    spec.erase("serviceAccount");
    return;
  }
  spec["serviceAccountName"] = name;
  spec["serviceAccount"] = name;
}

void normalizeStruct(json& object, std::string_view type) {
  auto it = structTable().find(type);
  if (it == structTable().end() || !object.is_object()) return;
  for (const Field& field : it->second) {
    const std::string key(field.name);
    auto member = object.find(key);
    if (member == object.end()) {
      if (!field.omitempty || isStructValue(field.type)) object[key] = zeroValue(field.type);
      continue;
    }
    normalizeValue(*member, field.type);
    if (field.omitempty && isEmptyValue(*member, field.type)) object.erase(member);
  }
  if (type == "PodSpec") convertPodSpecAliases(object);
}

}  // namespace

void normalizeLikeGoEncoding(json& object) {
  if (!object.is_object()) return;
  auto root = rootTypes().find(builtin_internal::typeKey(object));
  if (root == rootTypes().end()) return;
  json copy = object;
  try {
    normalizeStruct(copy, root->second);
  } catch (const json::exception&) {
    return;
  }
  object = std::move(copy);
}

}  // namespace harness::sim
