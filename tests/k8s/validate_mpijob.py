"""Checks an MPIJob manifest (JSON or YAML's JSON subset) as the Kubernetes API server would.

    python3 validate_mpijob.py SCHEMA MANIFEST

1. jsonschema (Debian: python3-jsonschema) against the CRD's openAPIV3Schema
   (mpijob-v2beta1.schema.json: Kubeflow mpi-operator v0.8.2's, see README.md there);
2. no field the API server would drop: a CRD's structural schema prunes unknown fields without an
   error, so a misspelt field (volumeMount) passes step 1 and is lost on the cluster. Every key
   of an object whose schema lists its properties must be one of them;
3. the replica types the operator knows (Launcher, Worker).
Prints "valid" and exits 0, or prints each problem and exits 1.
"""
import json
import sys

import jsonschema


def pruned_fields(value, schema, path):
    """The paths of the keys in `value` that `schema` does not declare."""
    found = []
    if isinstance(value, dict) and isinstance(schema, dict):
        properties = schema.get("properties")
        additional = schema.get("additionalProperties")
        for key, item in value.items():
            if properties is not None:
                if key in properties:
                    found += pruned_fields(item, properties[key], f"{path}.{key}")
                elif not schema.get("x-kubernetes-preserve-unknown-fields"):
                    found.append(f"{path}.{key}")
            elif isinstance(additional, dict):
                found += pruned_fields(item, additional, f"{path}.{key}")
    elif isinstance(value, list) and isinstance(schema, dict) and "items" in schema:
        for index, item in enumerate(value):
            found += pruned_fields(item, schema["items"], f"{path}[{index}]")
    return found


def main():
    schema_path, manifest_path = sys.argv[1], sys.argv[2]
    with open(schema_path) as f:
        schema = json.load(f)
    with open(manifest_path) as f:
        manifest = json.load(f)
    problems = []
    validator = jsonschema.Draft7Validator(schema)
    for error in sorted(validator.iter_errors(manifest), key=lambda e: list(e.path)):
        where = ".".join(str(p) for p in error.path) or "(top)"
        problems.append(f"schema: {where}: {error.message}")
    for field in pruned_fields(manifest, schema, ""):
        problems.append(f"unknown field, the API server would drop it: {field[1:]}")
    replicas = manifest.get("spec", {}).get("mpiReplicaSpecs", {})
    for kind in replicas:
        if kind not in ("Launcher", "Worker"):
            problems.append(f"unknown replica type: {kind}")
    if sorted(replicas) != ["Launcher", "Worker"]:
        problems.append(f"expected the replica types Launcher and Worker, found {sorted(replicas)}")
    if problems:
        print("\n".join(problems))
        sys.exit(1)
    print("valid")


if __name__ == "__main__":
    main()
