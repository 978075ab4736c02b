//! The CRDs: rendered from `files/crds/`, labelled, kept on uninstall, or left out.

use crate::*;

#[test]
fn crds_should_render_every_kind_labelled_and_kept_on_uninstall() {
    let rendering = Rendering::new(DEFAULTS);
    assert_eq!(
        rendering.names_of("CustomResourceDefinition"),
        [
            "clusterferrvaultconnections.ferrvault.com",
            "clusterferrvaultsecrets.ferrvault.com",
            "ferrvaultconnections.ferrvault.com",
            "ferrvaultsecrets.ferrvault.com"
        ]
    );
    for crd in rendering.of_kind("CustomResourceDefinition") {
        let metadata = &crd["metadata"];
        assert_eq!(
            metadata["annotations"]["helm.sh/resource-policy"], "keep",
            "{metadata}"
        );
        assert_eq!(
            metadata["labels"]["app.kubernetes.io/managed-by"], "Helm",
            "{metadata}"
        );
        assert_eq!(
            metadata["labels"]["app.kubernetes.io/part-of"], "ferrvault",
            "{metadata}"
        );
    }
    let not_kept = Rendering::new(&["crds.keep=false"]);
    for crd in not_kept.of_kind("CustomResourceDefinition") {
        assert!(
            crd["metadata"]["annotations"]
                .get("helm.sh/resource-policy")
                .is_none(),
            "{crd}"
        );
    }
}

#[test]
fn crds_off_should_render_no_crd() {
    assert!(
        Rendering::new(CRDS_OFF)
            .of_kind("CustomResourceDefinition")
            .is_empty()
    );
}
