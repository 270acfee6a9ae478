//! The only file that speaks `ros2-client`: the DDS context and node, topic names resolved
//! and checked, the QoS of each topic, publishers and subscriptions of `gpn_msgs` types.
//! Nothing of ros2-client leaves this module except through [`Publisher`]/[`Subscription`]
//! handles used by `run.rs`.

use std::net::{IpAddr, Ipv4Addr};

use gpn_msgs::{RosMessage, RosService};
use ros2_client::dds::rustdds::DomainParticipantBuilder;
use ros2_client::{
    Context, ContextOptions, MessageTypeName, Name, Node, NodeName, NodeOptions, ParameterValue,
    QosProfile, ServiceMapping, ServiceTypeName,
    qos::{Durability, History, WhenFull},
};

pub(crate) use ros2_client::{Publisher, Server, Spinner, Subscription};

use gpn_app::param_schema::ParamValue;
use gpn_app::ros_params::{RosParams, ServiceFraming};

/// A parameter value in ros2-client's terms.
pub(crate) fn to_ros(value: &ParamValue) -> ParameterValue {
    match value {
        ParamValue::Bool(b) => ParameterValue::Boolean(*b),
        ParamValue::Integer(i) => ParameterValue::Integer(*i),
        ParamValue::Double(x) => ParameterValue::Double(*x),
        ParamValue::DoubleArray(xs) => ParameterValue::DoubleArray(xs.clone()),
        ParamValue::String(s) => ParameterValue::String(s.clone()),
    }
}

/// A ros2-client parameter value in ours (None for types the node does not use).
pub(crate) fn from_ros(value: &ParameterValue) -> Option<ParamValue> {
    Some(match value {
        ParameterValue::Boolean(b) => ParamValue::Bool(*b),
        ParameterValue::Integer(i) => ParamValue::Integer(*i),
        ParameterValue::Double(x) => ParamValue::Double(*x),
        ParameterValue::DoubleArray(xs) => ParamValue::DoubleArray(xs.clone()),
        ParameterValue::String(s) => ParamValue::String(s.clone()),
        _ => return None,
    })
}

/// Why the ROS side could not start or run.
#[derive(Debug, thiserror::Error)]
pub enum RosError {
    /// A node or topic name is not a valid ROS 2 name.
    #[error("invalid {what} {name:?}: {reason}")]
    Name {
        /// Which name.
        what: &'static str,
        /// The name.
        name: String,
        /// The parser's reason.
        reason: String,
    },
    /// The DDS layer refused to create something.
    #[error("DDS: cannot create {what}: {reason}")]
    Dds {
        /// What.
        what: String,
        /// The middleware's message.
        reason: String,
    },
    /// A parameter is invalid.
    #[error("{0}")]
    Param(String),
}

/// How a topic is to be offered or read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TopicQos {
    /// Sensor data: best effort, volatile, keep last 5 (matches reliable writers too).
    SensorData,
    /// Reliable, volatile, keep last `depth`; a full send window makes `publish` fail
    /// after at most 10 ms instead of waiting.
    Reliable(usize),
    /// Reliable, transient local, keep last 1 (a "latched" reference).
    Latched,
    /// Best effort, volatile, keep last `depth` (a reader that accepts any writer).
    BestEffort(usize),
}

impl TopicQos {
    fn profile(self) -> QosProfile {
        match self {
            TopicQos::SensorData => QosProfile::subscription_default()
                .reliability_best_effort()
                .history(History::KeepLast { depth: 5 }),
            TopicQos::Reliable(depth) => QosProfile::publisher_default()
                .reliability_reliable(WhenFull::Wait(std::time::Duration::from_millis(10)))
                .history(History::KeepLast { depth }),
            TopicQos::Latched => QosProfile::publisher_default()
                .reliability_reliable(WhenFull::Wait(std::time::Duration::from_millis(10)))
                .durability(Durability::TransientLocal)
                .history(History::KeepLast { depth: 1 }),
            TopicQos::BestEffort(depth) => QosProfile::subscription_default()
                .reliability_best_effort()
                .history(History::KeepLast { depth }),
        }
    }
}

/// The DDS participant and the ROS node.
pub(crate) struct Transport {
    // Kept alive for the node's lifetime (dropping it leaves the DDS domain).
    _context: Context,
    node: Node,
    namespace: String,
    node_name: String,
}

fn dds_error(what: impl Into<String>) -> impl FnOnce(ros2_client::CreateError) -> RosError {
    let what = what.into();
    move |e| RosError::Dds {
        what,
        reason: e.to_string(),
    }
}

impl Transport {
    /// Joins `domain_id` as the node of `params` (`node_options` adds parameters); with
    /// `localhost_only`, discovery and data stay on 127.0.0.1 (unicast SPDP to the
    /// well-known ports of same-host participants; no multicast).
    pub fn new(
        params: &RosParams,
        domain_id: u16,
        localhost_only: bool,
        node_options: NodeOptions,
    ) -> Result<Self, RosError> {
        let namespace = if params.namespace.is_empty() {
            "/".to_owned()
        } else if params.namespace.starts_with('/') {
            params.namespace.clone()
        } else {
            format!("/{}", params.namespace)
        };
        let node_name =
            NodeName::new(&namespace, &params.node_name).map_err(|e| RosError::Name {
                what: "node name/namespace",
                name: format!("{namespace} {}", params.node_name),
                reason: format!("{e:?}"),
            })?;
        let what = format!("the DDS participant in domain {domain_id}");
        let context = if localhost_only {
            let participant = DomainParticipantBuilder::new(domain_id)
                .with_only_networks([IpAddr::V4(Ipv4Addr::LOCALHOST)])
                .same_host_loopback(true)
                .build()
                .map_err(|e| RosError::Dds {
                    what: what.clone(),
                    reason: e.to_string(),
                })?;
            Context::from_domain_participant(participant).map_err(dds_error(what))?
        } else {
            Context::with_options(ContextOptions::new().domain_id(domain_id))
                .map_err(dds_error(what))?
        };
        let node = context
            .new_node(node_name, node_options.enable_rosout(false))
            .map_err(|e| RosError::Dds {
                what: "the ROS node".into(),
                reason: e.to_string(),
            })?;
        Ok(Self {
            _context: context,
            node,
            namespace,
            node_name: params.node_name.clone(),
        })
    }

    /// The node's spinner (discovery, parameter services); run it on the receive thread.
    pub fn spinner(&mut self) -> Result<Spinner, RosError> {
        self.node.spinner().map_err(dds_error("the node spinner"))
    }

    /// The ros2-client node (parameters).
    pub fn node(&self) -> &Node {
        &self.node
    }

    /// `name` as a ros2-client topic name (`~/x` expanded, then parsed and checked).
    fn topic_name(&self, what: &'static str, name: &str) -> Result<Name, RosError> {
        let expanded = super::expand_private_name(name, &self.namespace, &self.node_name);
        Name::parse(&expanded).map_err(|e| RosError::Name {
            what,
            name: name.to_owned(),
            reason: format!("{e:?}"),
        })
    }

    fn topic<M: RosMessage>(
        &mut self,
        what: &'static str,
        name: &str,
        qos: &QosProfile,
    ) -> Result<ros2_client::dds::rustdds::Topic, RosError> {
        let topic_name = self.topic_name(what, name)?;
        self.node
            .create_topic(
                &topic_name,
                MessageTypeName::new(M::package(), M::type_name()),
                qos,
            )
            .map_err(dds_error(format!("topic {name}")))
    }

    /// A subscription to `name` (topic `what` in errors).
    pub fn subscription<M: RosMessage + 'static>(
        &mut self,
        what: &'static str,
        name: &str,
        qos: TopicQos,
    ) -> Result<Subscription<M>, RosError> {
        let profile = qos.profile();
        let topic = self.topic::<M>(what, name, &profile)?;
        self.node
            .create_subscription::<M>(&topic, Some(profile))
            .map_err(dds_error(format!("a subscription to {name}")))
    }

    /// A server of service `S` on `name`, framed for the robot's RMW.
    pub fn server<S: RosService>(
        &mut self,
        name: &str,
        framing: ServiceFraming,
    ) -> Result<Server<S::Request, S::Response>, RosError>
    where
        S::Request: ros2_client::Message + Clone + 'static,
        S::Response: ros2_client::Message + 'static,
    {
        let service_name = self.topic_name("service name", name)?;
        let mapping = match framing {
            ServiceFraming::FastDds => ServiceMapping::Enhanced,
            ServiceFraming::Cyclone => ServiceMapping::Cyclone,
        };
        let (package, type_name) = {
            let mut parts = S::TYPE_NAME.split('/');
            (
                parts.next().unwrap_or_default(),
                parts.nth(1).unwrap_or_default(),
            )
        };
        let qos = TopicQos::Reliable(10).profile();
        self.node
            .create_server::<S::Request, S::Response>(
                mapping,
                &service_name,
                &ServiceTypeName::new(package, type_name),
                qos.clone(),
                qos,
            )
            .map_err(dds_error(format!("service {name}")))
    }

    /// A publisher on `name`.
    pub fn publisher<M: RosMessage>(
        &mut self,
        what: &'static str,
        name: &str,
        qos: TopicQos,
    ) -> Result<Publisher<M>, RosError> {
        let profile = qos.profile();
        let topic = self.topic::<M>(what, name, &profile)?;
        self.node
            .create_publisher::<M>(&topic, Some(profile))
            .map_err(dds_error(format!("a publisher on {name}")))
    }
}
