"""Tool definitions in the request: reading the providers' shapes, counting them the way each
provider charges, rendering them back, and choosing which of a registry's tools a request offers."""
