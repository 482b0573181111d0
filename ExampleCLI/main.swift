import ProviderPod

print("ProviderPod demo: coming soon")
