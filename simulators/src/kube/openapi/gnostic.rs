//! The part of gnostic's `openapi.v2` protobuf messages (`OpenAPIv2.proto`) an OpenAPI v2
//! document of schemas needs: client-go asks for `/openapi/v2` in this encoding only.
//! Field numbers are those of `github.com/google/gnostic-models/openapiv2/OpenAPIv2.proto`;
//! prost encodes them.

/// `openapi.v2.Document`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Document {
    /// Always `2.0`.
    #[prost(string, tag = "1")]
    pub swagger: String,
    /// Title and version.
    #[prost(message, optional, tag = "2")]
    pub info: Option<Info>,
    /// Operations (none: clients here read definitions only).
    #[prost(message, optional, tag = "8")]
    pub paths: Option<Paths>,
    /// The schemas.
    #[prost(message, optional, tag = "9")]
    pub definitions: Option<Definitions>,
}

/// `openapi.v2.Info`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Info {
    /// Title.
    #[prost(string, tag = "1")]
    pub title: String,
    /// Version.
    #[prost(string, tag = "2")]
    pub version: String,
}

/// `openapi.v2.Paths` (empty).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Paths {}

/// `openapi.v2.Definitions`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Definitions {
    /// Named schemas.
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedSchema>,
}

/// `openapi.v2.NamedSchema`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NamedSchema {
    /// Name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Schema.
    #[prost(message, optional, tag = "2")]
    pub value: Option<Schema>,
}

/// `openapi.v2.Schema` (the fields a structural schema uses).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Schema {
    /// `$ref`.
    #[prost(string, tag = "1")]
    pub r#ref: String,
    /// `format`.
    #[prost(string, tag = "2")]
    pub format: String,
    /// `description`.
    #[prost(string, tag = "4")]
    pub description: String,
    /// `required`.
    #[prost(string, repeated, tag = "19")]
    pub required: Vec<String>,
    /// `additionalProperties`.
    #[prost(message, optional, boxed, tag = "21")]
    pub additional_properties: Option<Box<AdditionalPropertiesItem>>,
    /// `type`.
    #[prost(message, optional, tag = "22")]
    pub r#type: Option<TypeItem>,
    /// `items`.
    #[prost(message, optional, tag = "23")]
    pub items: Option<ItemsItem>,
    /// `properties`.
    #[prost(message, optional, tag = "25")]
    pub properties: Option<Properties>,
    /// `x-…` extensions, their values as YAML.
    #[prost(message, repeated, tag = "31")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `openapi.v2.AdditionalPropertiesItem`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AdditionalPropertiesItem {
    /// A schema or a boolean.
    #[prost(oneof = "AdditionalProperties", tags = "1, 2")]
    pub oneof: Option<AdditionalProperties>,
}

/// The two forms of `additionalProperties`.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum AdditionalProperties {
    /// A schema for every value.
    #[prost(message, tag = "1")]
    Schema(Box<Schema>),
    /// Allowed or not.
    #[prost(bool, tag = "2")]
    Boolean(bool),
}

/// `openapi.v2.TypeItem`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TypeItem {
    /// Types.
    #[prost(string, repeated, tag = "1")]
    pub value: Vec<String>,
}

/// `openapi.v2.ItemsItem`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ItemsItem {
    /// Item schemas.
    #[prost(message, repeated, tag = "1")]
    pub schema: Vec<Schema>,
}

/// `openapi.v2.Properties`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Properties {
    /// Named property schemas.
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedSchema>,
}

/// `openapi.v2.NamedAny`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NamedAny {
    /// Name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Value.
    #[prost(message, optional, tag = "2")]
    pub value: Option<Any>,
}

/// `openapi.v2.Any` (its YAML form).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Any {
    /// The value as YAML.
    #[prost(string, tag = "2")]
    pub yaml: String,
}
