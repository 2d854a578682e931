"""The paper's published Table 2, as the tests check the generated tasks against it."""

# docs/benchmark.md §5 (paper, Table 2): family -> (complete, incomplete, partial templates, partial
# tasks, block templates, block tasks, complete tasks in partial templates, complete tasks in
# block templates).
TABLE2 = {
    "due_diligence_v1": (3, 21, 3, 12, 3, 12, 1, 2),
    "compliance_audit_v1": (4, 20, 4, 16, 2, 8, 4, 0),
    "security_incident_v1": (7, 17, 2, 8, 4, 16, 1, 6),
}
