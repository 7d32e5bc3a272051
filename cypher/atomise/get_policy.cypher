OPTIONAL MATCH (p:NamespacePolicy {subject: $subject, policy: $policy})
RETURN p.json AS json
