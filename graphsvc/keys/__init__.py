"""Keys and secrets on disk: the Ed25519 signing key ring (SIG-4), the server's MAC
secret, and the API-token file that maps tokens to Bindings (API-2)."""
