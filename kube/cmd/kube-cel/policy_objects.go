package main

// Create and update of ValidatingAdmissionPolicy, MutatingAdmissionPolicy and their bindings as
// the registry does them: decoding into admissionregistration.k8s.io/v1 with the scheme's
// defaults, conversion to the internal version, the strategy's PrepareForCreate/PrepareForUpdate
// and Validate/ValidateUpdate (k8s.io/kubernetes pkg/registry/admissionregistration/
// validatingadmissionpolicy/strategy.go, validatingadmissionpolicybinding/strategy.go and the
// mutatingadmissionpolicy{,binding} ones), and
// the 422 rest.BeforeCreate/BeforeUpdate return (apierrors.NewInvalid). The policies' Validate and
// ValidateUpdate are the registry strategies' own, so their paramKind authorization (authz.go:
// the requesting user must be allowed to "get" every object of the paramKind's resource, unless
// in system:masters; a Forbidden error on spec.paramKind) is made with the simulator's authorizer
// (authz.go here) for the user the simulator names; without a user it is not made. The bindings'
// Validate and ValidateUpdate are their strategies' own too, so their paramRef authorization
// (validatingadmissionpolicybinding/authz.go, mutatingadmissionpolicybinding/authz.go: "get" on
// the named param, "list" without a name, on the bound policy's paramKind resource, or on every
// resource when the policy is missing; a Forbidden error on spec.paramRef) is made the same way,
// with the bound policy the simulator sends ("policy", as stored) as the strategies'
// PolicyGetter: absent, it is NotFound as storage's Get says.

import (
	"context"
	"encoding/json"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/operation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericfeatures "k8s.io/apiserver/pkg/features"
	"k8s.io/apiserver/pkg/registry/rest"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/apis/admissionregistration"
	"k8s.io/kubernetes/pkg/apis/admissionregistration/validation"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/mutatingadmissionpolicy"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/mutatingadmissionpolicybinding"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/validatingadmissionpolicy"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/validatingadmissionpolicybinding"
)

const (
	kindPolicy          = "ValidatingAdmissionPolicy"
	kindBinding         = "ValidatingAdmissionPolicyBinding"
	kindMutatingPolicy  = "MutatingAdmissionPolicy"
	kindMutatingBinding = "MutatingAdmissionPolicyBinding"
)

// resourceOf names the resource each kind is served as (the RequestInfo of the declarative
// validation).
var resourceOf = map[string]string{
	kindPolicy:          "validatingadmissionpolicies",
	kindBinding:         "validatingadmissionpolicybindings",
	kindMutatingPolicy:  "mutatingadmissionpolicies",
	kindMutatingBinding: "mutatingadmissionpolicybindings",
}

// decodeV1 decodes a v1 object and applies the scheme's defaults (SetObjectDefaults_*), as the
// apiserver's decoder does for a request body and as the informers' objects are stored.
func decodeV1(raw json.RawMessage, into runtime.Object) error {
	if err := json.Unmarshal(raw, into); err != nil {
		return err
	}
	legacyscheme.Scheme.Default(into)
	return nil
}

func toInternal(in runtime.Object, out runtime.Object) error {
	return legacyscheme.Scheme.Convert(in, out, nil)
}

// strategy is what a policy kind's registry strategy does on create and update besides the
// common part: generation 1 on create (PrepareForCreate), the old generation kept and bumped when
// the spec changed on update (rest.BeforeUpdate, PrepareForUpdate), Validate with the static
// suffix check, ValidateUpdate.
type strategy[T interface {
	runtime.Object
	metav1.Object
}] struct {
	spec           func(T) any
	prepareCreate  func(T)          // optional
	prepareUpdate  func(obj, old T) // optional
	validate       func(T) field.ErrorList
	validateUpdate func(obj, old T) field.ErrorList
	// validate is the registry strategy's own Validate, which checks the static suffix itself.
	validateHasSuffix bool
}

func (s strategy[T]) prepareAndValidate(obj, old runtime.Object) field.ErrorList {
	p := obj.(T)
	if old == nil {
		p.SetGeneration(1)
		if s.prepareCreate != nil {
			s.prepareCreate(p)
		}
		if s.validateHasSuffix {
			return s.validate(p)
		}
		return withStaticSuffix(s.validate(p), p.GetName())
	}
	o := old.(T)
	if s.prepareUpdate != nil {
		s.prepareUpdate(p, o)
	}
	p.SetGeneration(o.GetGeneration())
	if !apiequality.Semantic.DeepEqual(s.spec(o), s.spec(p)) {
		p.SetGeneration(o.GetGeneration() + 1)
	}
	return s.validateUpdate(p, o)
}

// admitPolicyObject gives the object as it would be stored (v1 JSON), or the 422 Status.
func (s *server) admitPolicyObject(req *request) (map[string]any, error) {
	kind, rawObject, rawOld := req.Kind, req.Object, req.OldObject
	// The strategies' context: the requesting user, and the authorizer and resource resolver
	// their paramKind check uses (kube-apiserver's authorizer and discovery).
	ctx := context.Background()
	var authz authorizer.UnconditionalAuthorizer
	if req.UserInfo != nil {
		ctx = genericapirequest.WithUser(ctx, &user.DefaultInfo{Name: req.UserInfo.Username, UID: req.UserInfo.UID,
			Groups: req.UserInfo.Groups, Extra: req.UserInfo.Extra})
		authz = s.authz
	}
	mapper, err := servedRESTMapper(req.Resources)
	if err != nil {
		return nil, err
	}
	resolver := restMapperResolver{mapper}
	switch kind {
	case kindPolicy:
		// validatingadmissionpolicy/strategy.go: the status is cleared on create, kept on update.
		return admitObject(kind, rawObject, rawOld, &admissionregistrationv1.ValidatingAdmissionPolicy{},
			&admissionregistrationv1.ValidatingAdmissionPolicy{},
			&admissionregistration.ValidatingAdmissionPolicy{}, &admissionregistration.ValidatingAdmissionPolicy{},
			strategy[*admissionregistration.ValidatingAdmissionPolicy]{
				spec: func(p *admissionregistration.ValidatingAdmissionPolicy) any { return p.Spec },
				prepareCreate: func(p *admissionregistration.ValidatingAdmissionPolicy) {
					p.Status = admissionregistration.ValidatingAdmissionPolicyStatus{}
				},
				prepareUpdate: func(p, o *admissionregistration.ValidatingAdmissionPolicy) { p.Status = o.Status },
				validate: func(p *admissionregistration.ValidatingAdmissionPolicy) field.ErrorList {
					return validatingadmissionpolicy.NewStrategy(authz, resolver).Validate(ctx, p)
				},
				validateUpdate: func(p, o *admissionregistration.ValidatingAdmissionPolicy) field.ErrorList {
					return validatingadmissionpolicy.NewStrategy(authz, resolver).ValidateUpdate(ctx, p, o)
				},
				validateHasSuffix: true,
			}.prepareAndValidate)
	case kindBinding:
		getter := boundPolicy{stored: req.Policy}
		return admitObject(kind, rawObject, rawOld, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{},
			&admissionregistrationv1.ValidatingAdmissionPolicyBinding{},
			&admissionregistration.ValidatingAdmissionPolicyBinding{}, &admissionregistration.ValidatingAdmissionPolicyBinding{},
			strategy[*admissionregistration.ValidatingAdmissionPolicyBinding]{
				spec: func(b *admissionregistration.ValidatingAdmissionPolicyBinding) any { return b.Spec },
				validate: func(b *admissionregistration.ValidatingAdmissionPolicyBinding) field.ErrorList {
					return validatingadmissionpolicybinding.NewStrategy(authz, getter, resolver).Validate(ctx, b)
				},
				validateUpdate: func(b, o *admissionregistration.ValidatingAdmissionPolicyBinding) field.ErrorList {
					return validatingadmissionpolicybinding.NewStrategy(authz, getter, resolver).ValidateUpdate(ctx, b, o)
				},
				validateHasSuffix: true,
			}.prepareAndValidate)
	case kindMutatingPolicy:
		// mutatingadmissionpolicy/strategy.go: no status.
		return admitObject(kind, rawObject, rawOld, &admissionregistrationv1.MutatingAdmissionPolicy{},
			&admissionregistrationv1.MutatingAdmissionPolicy{},
			&admissionregistration.MutatingAdmissionPolicy{}, &admissionregistration.MutatingAdmissionPolicy{},
			strategy[*admissionregistration.MutatingAdmissionPolicy]{
				spec: func(p *admissionregistration.MutatingAdmissionPolicy) any { return p.Spec },
				validate: func(p *admissionregistration.MutatingAdmissionPolicy) field.ErrorList {
					return mutatingadmissionpolicy.NewStrategy(authz, resolver).Validate(ctx, p)
				},
				validateUpdate: func(p, o *admissionregistration.MutatingAdmissionPolicy) field.ErrorList {
					return mutatingadmissionpolicy.NewStrategy(authz, resolver).ValidateUpdate(ctx, p, o)
				},
				validateHasSuffix: true,
			}.prepareAndValidate)
	case kindMutatingBinding:
		getter := boundPolicy{stored: req.Policy}
		return admitObject(kind, rawObject, rawOld, &admissionregistrationv1.MutatingAdmissionPolicyBinding{},
			&admissionregistrationv1.MutatingAdmissionPolicyBinding{},
			&admissionregistration.MutatingAdmissionPolicyBinding{}, &admissionregistration.MutatingAdmissionPolicyBinding{},
			strategy[*admissionregistration.MutatingAdmissionPolicyBinding]{
				spec: func(b *admissionregistration.MutatingAdmissionPolicyBinding) any { return b.Spec },
				validate: func(b *admissionregistration.MutatingAdmissionPolicyBinding) field.ErrorList {
					return mutatingadmissionpolicybinding.NewStrategy(authz, getter, resolver).Validate(ctx, b)
				},
				validateUpdate: func(b, o *admissionregistration.MutatingAdmissionPolicyBinding) field.ErrorList {
					return mutatingadmissionpolicybinding.NewStrategy(authz, getter, resolver).ValidateUpdate(ctx, b, o)
				},
				validateHasSuffix: true,
			}.prepareAndValidate)
	default:
		return nil, fmt.Errorf("admitPolicyObject: kind %q is not %s, %s, %s or %s", kind, kindPolicy, kindBinding,
			kindMutatingPolicy, kindMutatingBinding)
	}
}

// withStaticSuffix adds the create-time name check of both strategies' Validate when the
// ManifestBasedAdmissionControlConfig feature is on (beta, on by default in v1.37).
func withStaticSuffix(errs field.ErrorList, name string) field.ErrorList {
	if utilfeature.DefaultFeatureGate.Enabled(genericfeatures.ManifestBasedAdmissionControlConfig) {
		errs = append(errs, validation.ValidateStaticSuffix(name, field.NewPath("metadata", "name"))...)
	}
	return errs
}

func admitObject(kind string, rawObject, rawOld json.RawMessage, v1Object, v1Old, internal, internalOld runtime.Object,
	prepareAndValidate func(obj, old runtime.Object) field.ErrorList) (map[string]any, error) {
	if err := decodeV1(rawObject, v1Object); err != nil {
		return nil, fmt.Errorf("object: %v", err)
	}
	if err := toInternal(v1Object, internal); err != nil {
		return nil, fmt.Errorf("object: %v", err)
	}
	var old runtime.Object
	if len(rawOld) > 0 && string(rawOld) != "null" {
		if err := decodeV1(rawOld, v1Old); err != nil {
			return nil, fmt.Errorf("oldObject: %v", err)
		}
		if err := toInternal(v1Old, internalOld); err != nil {
			return nil, fmt.Errorf("oldObject: %v", err)
		}
		old = internalOld
	}
	errs := prepareAndValidate(internal, old)
	// rest.ValidateCreate / ValidateUpdate: both strategies embed rest.DeclarativeValidation, whose
	// enforced (beta) errors replace the handwritten ones they cover.
	resource, op, verb := resourceOf[kind], operation.Create, "create"
	if old != nil {
		op, verb = operation.Update, "update"
	}
	ctx := genericapirequest.WithRequestInfo(context.Background(), &genericapirequest.RequestInfo{
		IsResourceRequest: true, Verb: verb, APIPrefix: "apis", APIGroup: admissionregistration.GroupName,
		APIVersion: "v1", Resource: resource, Name: internal.(metav1.Object).GetName(),
	})
	errs = rest.ValidateDeclarativelyWithMigrationChecks(ctx, legacyscheme.Scheme, internal, old, errs, op, rest.DeclarativeValidationConfig{})
	if len(errs) > 0 {
		name := internal.(metav1.Object).GetName()
		status := apierrors.NewInvalid(schema.GroupKind{Group: admissionregistration.GroupName, Kind: kind}, name, errs).ErrStatus
		return map[string]any{"status": status}, nil
	}
	out, err := legacyscheme.Scheme.ConvertToVersion(internal, admissionregistrationv1.SchemeGroupVersion)
	if err != nil {
		return nil, err
	}
	out.GetObjectKind().SetGroupVersionKind(admissionregistrationv1.SchemeGroupVersion.WithKind(kind))
	return map[string]any{"object": out}, nil
}

// boundPolicy is the binding strategies' PolicyGetter (storage's Get in kube-apiserver,
// validatingadmissionpolicybinding/storage/storage.go DefaultPolicyGetter): the policy the
// simulator found under the binding's policyName, decoded as storage decodes it; absent, the
// NotFound error storage's Get returns.
type boundPolicy struct{ stored json.RawMessage }

func (g boundPolicy) internal(resource, name string, v1 runtime.Object, internal metav1.Object) error {
	if len(g.stored) == 0 || string(g.stored) == "null" {
		return apierrors.NewNotFound(schema.GroupResource{Group: admissionregistration.GroupName, Resource: resource}, name)
	}
	if err := decodeV1(g.stored, v1); err != nil {
		return fmt.Errorf("policy: %v", err)
	}
	if err := toInternal(v1, internal.(runtime.Object)); err != nil {
		return fmt.Errorf("policy: %v", err)
	}
	if internal.GetName() != name {
		return apierrors.NewNotFound(schema.GroupResource{Group: admissionregistration.GroupName, Resource: resource}, name)
	}
	return nil
}

func (g boundPolicy) GetValidatingAdmissionPolicy(_ context.Context, name string) (*admissionregistration.ValidatingAdmissionPolicy, error) {
	policy := &admissionregistration.ValidatingAdmissionPolicy{}
	if err := g.internal(resourceOf[kindPolicy], name, &admissionregistrationv1.ValidatingAdmissionPolicy{}, policy); err != nil {
		return nil, err
	}
	return policy, nil
}

func (g boundPolicy) GetMutatingAdmissionPolicy(_ context.Context, name string) (*admissionregistration.MutatingAdmissionPolicy, error) {
	policy := &admissionregistration.MutatingAdmissionPolicy{}
	if err := g.internal(resourceOf[kindMutatingPolicy], name, &admissionregistrationv1.MutatingAdmissionPolicy{}, policy); err != nil {
		return nil, err
	}
	return policy, nil
}

// restMapperResolver is the strategies' resolver.ResourceResolver (discovery in kube-apiserver)
// over the resources the simulator serves.
type restMapperResolver struct{ mapper meta.RESTMapper }

func (r restMapperResolver) Resolve(gvk schema.GroupVersionKind) (schema.GroupVersionResource, error) {
	mapping, err := r.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	return mapping.Resource, nil
}
