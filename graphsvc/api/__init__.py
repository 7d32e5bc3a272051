"""The GraphQL surface (strawberry on ASGI): thin types and resolvers over Service."""
