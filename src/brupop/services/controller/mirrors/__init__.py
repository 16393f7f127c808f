"""What the controller reads of the cluster: mirrors kept current by informers and the change
watch, the pod census, a node's pods and its drain. Imports ports and the domain only."""
