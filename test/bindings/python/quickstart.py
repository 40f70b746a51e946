from cdk8s import App, Chart
import cdk8s_plus_27 as kplus
from cdk8s_sidecars import LogOutput, Sidecars, WithLogAgent

app = App()
Sidecars.configure(app, kubernetes_version="1.29")  # the LOWEST version of API server and nodes
chart = Chart(app, "shop")
web = kplus.Deployment(chart, "web", containers=[
    kplus.ContainerProps(name="app", image="ghcr.io/example/shop-web:1.4.2", port_number=8080),
])
WithLogAgent(chart, "logs", workload=web, output=LogOutput.loki(host="loki.monitoring.svc"))
app.synth()
