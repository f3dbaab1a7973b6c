#!/usr/bin/env python3
"""Validate Kubernetes manifests against CustomResourceDefinitions' schemas.

Usage: validate-crds.py CRD_DIR MANIFEST...

Each document of each MANIFEST whose apiVersion/kind one of the CRDs in
CRD_DIR defines is checked against that version's openAPIV3Schema, as the
API server does with strict field validation (kubectl --validate=strict):
types, required fields, enums, patterns, minimums, and no field the schema
does not know (unless it preserves unknown fields). Prints one TAP line per
document; exits 1 when one fails or a document has no CRD. Needs PyYAML and
jsonschema (Debian: python3-yaml, python3-jsonschema)."""
import glob
import os
import sys

import jsonschema
import yaml


def unknown_fields(value, schema, path):
    """Fields of @value that @schema does not declare (strict validation)."""
    out = []
    if not isinstance(schema, dict):
        return out
    if isinstance(value, dict):
        if schema.get("x-kubernetes-preserve-unknown-fields"):
            return out
        props = schema.get("properties")
        addl = schema.get("additionalProperties")
        for k, v in value.items():
            if props is not None and k in props:
                out += unknown_fields(v, props[k], path + "." + k)
            elif isinstance(addl, dict):
                out += unknown_fields(v, addl, path + "." + k)
            elif props is not None and addl is None:
                out.append(path + "." + k)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, v in enumerate(value):
            out += unknown_fields(v, schema["items"], "%s[%d]" % (path, i))
    return out


def main():
    crd_dir, manifests = sys.argv[1], sys.argv[2:]
    schemas = {}
    for f in sorted(glob.glob(os.path.join(crd_dir, "*.yaml"))):
        with open(f) as fh:
            crd = yaml.safe_load(fh)
        group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
        for v in crd["spec"]["versions"]:
            schemas[(group + "/" + v["name"], kind)] = v["schema"]["openAPIV3Schema"]
    n = failed = 0
    for m in manifests:
        with open(m) as fh:
            docs = [d for d in yaml.safe_load_all(fh) if d]
        for d in docs:
            key = (d.get("apiVersion"), d.get("kind"))
            name = "%s %s/%s" % (os.path.basename(m), d.get("kind"), d.get("metadata", {}).get("name"))
            if key[0] and "." not in key[0].split("/")[0]:
                continue  # core Kubernetes kinds: not this script's
            n += 1
            schema = schemas.get(key)
            if schema is None:
                failed += 1
                print("not ok %d - %s: no CRD defines %s %s" % (n, name, key[0], key[1]))
                continue
            errors = ["%s: %s" % ("/".join(str(p) for p in e.absolute_path), e.message)
                      for e in jsonschema.Draft4Validator(schema).iter_errors(d)]
            errors += ["%s: unknown field" % p for p in unknown_fields(d, schema, "")]
            if errors:
                failed += 1
                print("not ok %d - %s: %s" % (n, name, "; ".join(errors)[:600]))
            else:
                print("ok %d - %s matches the %s schema" % (n, name, key[0]))
    print("1..%d" % n)
    return 1 if failed or n == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
