"""The one reader of YAML files: every experiment, rubric, corpus, recipe and resource file goes through it.

Plain `yaml.safe_load` keeps the last of two equal keys without a word (`data:` given twice reads the second
file); here a key given twice in one mapping, at any depth, is an error naming the file, the key and both
lines. Explicit keys that override a merged mapping (`<<: *defaults`) are not duplicates."""

from __future__ import annotations

from typing import Any

import yaml

from dialectbias.errors import DialectBiasError

_MERGE_TAG = "tag:yaml.org,2002:merge"


def load_yaml(text: str, source: str, error: type[DialectBiasError]) -> tuple[Any, yaml.Node | None]:
    """(data, node tree) of one YAML document; `node` is what `errors.yaml_line` reads lines from (None for an
    empty document). Raises `error` headed by `source` for invalid YAML or a key given twice in a mapping."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, None
        _no_duplicate_keys(node, loader, source, error)
        return loader.construct_document(node), node
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise error(f"{where}: not valid YAML: {problem}") from None
    finally:
        loader.dispose()


def _no_duplicate_keys(root: yaml.Node, loader: yaml.SafeLoader, source: str,
                       error: type[DialectBiasError]) -> None:
    """Walk the node tree (each node once: aliases share nodes) and raise at the first key given twice."""
    seen_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, tuple[str, ...]]] = [(root, ())]
    while stack:
        node, path = stack.pop()
        if id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        if isinstance(node, yaml.MappingNode):
            first: dict[Any, int] = {}
            for key_node, value_node in node.value:
                if key_node.tag == _MERGE_TAG:
                    continue
                key = _key(key_node, loader)
                line = key_node.start_mark.line + 1
                if key in first:
                    name = ".".join((*path, str(key_node.value if isinstance(key_node, yaml.ScalarNode) else key)))
                    raise error(f"{source}:{line}: key {name!r} given twice (lines {first[key]} and {line}); "
                                "keep one")
                first[key] = line
                stack.append((value_node, (*path, str(key_node.value))))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, (*path[:-1], f"{path[-1]}[{i}]") if path else (f"[{i}]",))
                         for i, item in enumerate(node.value))


def _key(key_node: yaml.Node, loader: yaml.SafeLoader) -> Any:
    """The key as the mapping will hold it (`1` and `"1"` differ; `yes` and `true` are the same), or the
    node's text when it is not hashable (a sequence as a key)."""
    if isinstance(key_node, yaml.ScalarNode):
        return loader.construct_object(key_node)
    return (key_node.tag, key_node.start_mark.index)
