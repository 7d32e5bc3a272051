"""Pure core of graphsvc: no database, no HTTP, no clock."""
