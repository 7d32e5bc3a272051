UNWIND $tokenIds AS tid
OPTIONAL MATCH (i:Input {subject: $subject, tokenId: tid})
RETURN tid AS tokenId, i IS NOT NULL AS found, i.inputsDigest AS inputsDigest
