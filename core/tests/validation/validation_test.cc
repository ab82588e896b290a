#include "harness/validation/validation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>

// apimachinery pkg/util/validation and pkg/api/validate/content (v0.37): the messages are the ones
// kube-apiserver prints.

namespace harness::validation {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr std::string_view kSubdomainMsg =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

constexpr std::string_view kQualifiedNameMsg =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";


TEST(NameValidationTest, Dns1123Label) {
  EXPECT_THAT(isDns1123Label("my-name"), IsEmpty());
  EXPECT_THAT(isDns1123Label("a.b"), ElementsAre("must not contain dots"));
  EXPECT_THAT(isDns1123Label("-a"),
              ElementsAre("a lowercase RFC 1123 label must consist of lower case alphanumeric "
                          "characters or '-', and must start and end with an alphanumeric "
                          "character (e.g. 'my-name',  or '123-abc', regex used for validation is "
                          "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"));
  EXPECT_THAT(isDns1123Label(std::string(64, 'a')),
              ElementsAre("must be no more than 63 characters"));
}

TEST(NameValidationTest, Dns1123Subdomain) {
  EXPECT_THAT(isDns1123Subdomain("a.b-c.d"), IsEmpty());
  EXPECT_THAT(isDns1123Subdomain("a..b"), ElementsAre(std::string(kSubdomainMsg)));
  EXPECT_THAT(isDns1123Subdomain(""), ElementsAre(std::string(kSubdomainMsg)));
}

TEST(NameValidationTest, Dns1035Label) {
  EXPECT_THAT(isDns1035Label("v1beta1"), IsEmpty());
  EXPECT_EQ(isDns1035Label("1v").size(), 1u);
}

TEST(NameValidationTest, QualifiedNamePrefix) {
  EXPECT_THAT(isQualifiedName("/a"), ElementsAre("prefix part must be non-empty"));
  EXPECT_THAT(isQualifiedName("Example.com/a"),
              ElementsAre("prefix part " + std::string(kSubdomainMsg)));
  EXPECT_THAT(
      isQualifiedName("a/"),
      ElementsAre("name part must be non-empty", "name part " + std::string(kQualifiedNameMsg)));
  EXPECT_THAT(isQualifiedName(std::string(64, 'a')),
              ElementsAre("name part must be no more than 63 characters"));
}

// content/kube.go IsLabelKey (what IsQualifiedName is since apimachinery v0.35): more than one
// '/' is "a valid label key ..."; the label selector's copy said "a qualified name ...".
TEST(NameValidationTest, QualifiedNameWithTwoSlashes) {
  EXPECT_THAT(isQualifiedName("a/b/c"),
              ElementsAre("a valid label key " + std::string(kQualifiedNameMsg) +
                          " with an optional DNS subdomain prefix and '/' (e.g. "
                          "'example.com/MyName')"));
}

TEST(NameValidationTest, LabelValue) {
  EXPECT_THAT(isValidLabelValue(""), IsEmpty());
  EXPECT_THAT(isValidLabelValue("my_value-1.x"), IsEmpty());
  EXPECT_THAT(isValidLabelValue(std::string(64, 'a')),
              ElementsAre("must be no more than 63 characters"));
  EXPECT_THAT(isValidLabelValue("-x"),
              ElementsAre("a valid label must be an empty string or consist of alphanumeric "
                          "characters, '-', '_' or '.', and must start and end with an "
                          "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
                          "regex used for validation is "
                          "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"));
}

}  // namespace
}  // namespace harness::validation
