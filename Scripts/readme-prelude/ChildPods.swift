// What the DocC article ChildPods.md uses without showing it (see Scripts/check-readme).
import ProviderPod
