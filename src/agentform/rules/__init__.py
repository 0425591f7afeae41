"""Rules both halves enforce: written once, imported by the service and the provisioner."""
