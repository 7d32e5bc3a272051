CREATE (e:SignedEvent {subject: $subject, sequence: $sequence, prevHash: $prevHash,
                       type: $type, payload: $payload, signedAt: $signedAt,
                       keyId: $keyId, signature: $signature, hash: $hash, v: 1})
RETURN e.sequence AS sequence
