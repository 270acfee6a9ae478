//! The only file that creates rcl entities (through r2r): the context (which reads the
//! command line's `--ros-args`: remaps, `__node`, `__ns`, `-p`, `--params-file`), the node,
//! topics with their QoS, publishers and subscriptions of `gpn_msgs` types (converted at the
//! edge, `rcl_msgs`), and service servers. Topic and service names go to rcl as written:
//! rcl expands `~/` and relative names and applies the remaps.

use std::pin::Pin;
use std::sync::{Arc, Mutex};

use futures::{Stream, StreamExt as _};
use gpn_app::ros_params::RosParams;

use super::rcl_msgs::{FromRcl, ToRcl};

/// Why the ROS side could not start or run.
#[derive(Debug, thiserror::Error)]
pub enum RosError {
    /// rcl refused to create something (a bad name, a middleware failure).
    #[error("ROS 2: cannot create {what}: {reason}")]
    Rcl {
        /// What.
        what: String,
        /// rcl's message.
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
    /// Reliable, volatile, keep last `depth`.
    Reliable(usize),
    /// Reliable, transient local, keep last 1 (a "latched" offer).
    Latched,
    /// Best effort, volatile, keep last `depth` (a reader that accepts any writer).
    BestEffort(usize),
}

impl TopicQos {
    fn profile(self) -> r2r::QosProfile {
        let base = r2r::QosProfile::default();
        match self {
            TopicQos::SensorData => base.best_effort().keep_last(5),
            TopicQos::Reliable(depth) => base.reliable().keep_last(depth),
            TopicQos::Latched => base.reliable().transient_local().keep_last(1),
            TopicQos::BestEffort(depth) => base.best_effort().keep_last(depth),
        }
    }
}

/// A publisher of a `gpn_msgs` type.
pub(crate) struct Publisher<M: ToRcl> {
    inner: r2r::Publisher<M::Rcl>,
}

impl<M: ToRcl> Publisher<M> {
    /// Publishes `msg` (converted to the rosidl type).
    pub fn publish(&self, msg: &M) -> Result<(), r2r::Error> {
        self.inner.publish(&msg.to_rcl())
    }

    /// Publishes a message already of the rosidl type (no conversion).
    pub fn publish_rcl(&self, msg: &M::Rcl) -> Result<(), r2r::Error> {
        self.inner.publish(msg)
    }
}

/// Messages of a subscription, as `gpn_msgs` types.
pub(crate) type Subscription<M> = Pin<Box<dyn Stream<Item = M> + Send>>;

/// Requests to a service server.
pub(crate) type Requests<S> = Pin<Box<dyn Stream<Item = r2r::ServiceRequest<S>> + Send>>;

/// The node's clock: ROS time (`/clock` with `use_sim_time`, else the system clock).
pub(crate) type NodeClock = Arc<Mutex<r2r::Clock>>;

/// The time on the node's clock (zero if it cannot be read).
pub(crate) fn ros_now(clock: &NodeClock) -> r2r::builtin_interfaces::msg::Time {
    match clock.lock().map(|mut c| c.get_now()) {
        Ok(Ok(now)) => r2r::Clock::to_builtin_time(&now),
        _ => Default::default(),
    }
}

/// The rcl context and node.
pub(crate) struct Transport {
    node: r2r::Node,
}

fn rcl_error(what: impl Into<String>) -> impl FnOnce(r2r::Error) -> RosError {
    let what = what.into();
    move |e| RosError::Rcl {
        what,
        reason: e.to_string(),
    }
}

impl Transport {
    /// Initialises rcl with the process's command line (its `--ros-args`) and creates the
    /// node named by `params` (which `--ros-args -r __node:=…`/`__ns:=…` override). The DDS
    /// domain and discovery range come from the environment (`ROS_DOMAIN_ID`,
    /// `ROS_AUTOMATIC_DISCOVERY_RANGE`), which `run` sets from the parameters first.
    pub fn new(params: &RosParams) -> Result<Self, RosError> {
        let context = r2r::Context::create().map_err(rcl_error("the rcl context"))?;
        let namespace = if params.namespace.is_empty() || params.namespace.starts_with('/') {
            params.namespace.clone()
        } else {
            format!("/{}", params.namespace)
        };
        let node = r2r::Node::create(context, &params.node_name, &namespace).map_err(|e| {
            RosError::Rcl {
                what: format!("node {:?} in namespace {namespace:?}", params.node_name),
                reason: e.to_string(),
            }
        })?;
        Ok(Self { node })
    }

    /// The node, for the parameter services and the spin thread.
    pub fn node_mut(&mut self) -> &mut r2r::Node {
        &mut self.node
    }

    /// The node, once every entity is created: the spin thread owns it.
    pub fn into_node(self) -> r2r::Node {
        self.node
    }

    /// The node's fully qualified name (after remapping).
    pub fn fully_qualified_name(&self) -> String {
        self.node
            .fully_qualified_name()
            .unwrap_or_else(|_| "<unknown>".into())
    }

    /// The node's name and namespace (after remapping).
    pub fn names(&self) -> (String, String) {
        (
            self.node.name().unwrap_or_default(),
            self.node.namespace().unwrap_or_default(),
        )
    }

    /// The node's clock follows `/clock` (ROS 2's `use_sim_time`).
    pub fn use_sim_time(&mut self) -> Result<(), RosError> {
        let time_source = self.node.get_time_source();
        time_source
            .enable_sim_time(&mut self.node)
            .map_err(rcl_error("the /clock subscription (use_sim_time)"))
    }

    /// The node's ROS clock.
    pub fn clock(&self) -> NodeClock {
        self.node.get_ros_clock()
    }

    /// A subscription to `name` (topic `what` in errors).
    pub fn subscription<M: FromRcl + Send + 'static>(
        &mut self,
        what: &'static str,
        name: &str,
        qos: TopicQos,
    ) -> Result<Subscription<M>, RosError>
    where
        M::Rcl: Send,
    {
        let stream = self
            .node
            .subscribe::<M::Rcl>(name, qos.profile())
            .map_err(rcl_error(format!("a subscription to the {what} {name:?}")))?;
        Ok(Box::pin(stream.map(M::from_rcl)))
    }

    /// The robot descriptions on `name` (std_msgs/String, reliable, transient local, keep
    /// last 1: robot_state_publisher's offer).
    pub fn robot_descriptions(
        &mut self,
        name: &str,
    ) -> Result<Pin<Box<dyn Stream<Item = String> + Send>>, RosError> {
        let stream = self
            .node
            .subscribe::<r2r::std_msgs::msg::String>(name, TopicQos::Latched.profile())
            .map_err(rcl_error(format!(
                "a subscription to the robot description {name:?}"
            )))?;
        Ok(Box::pin(stream.map(|msg| msg.data)))
    }

    /// A publisher on `name`.
    pub fn publisher<M: ToRcl>(
        &mut self,
        what: &'static str,
        name: &str,
        qos: TopicQos,
    ) -> Result<Publisher<M>, RosError> {
        let inner = self
            .node
            .create_publisher::<M::Rcl>(name, qos.profile())
            .map_err(rcl_error(format!("a publisher on the {what} {name:?}")))?;
        Ok(Publisher { inner })
    }

    /// A publisher of an rcl type the node has no struct of (`rcl_interfaces`).
    pub fn rcl_publisher<T: r2r::WrappedTypesupport>(
        &mut self,
        name: &str,
        qos: r2r::QosProfile,
    ) -> Result<r2r::Publisher<T>, RosError> {
        self.node
            .create_publisher::<T>(name, qos)
            .map_err(rcl_error(format!("a publisher on {name:?}")))
    }

    /// The node's logger name.
    pub fn logger(&self) -> String {
        self.node.logger().to_owned()
    }

    /// The server of action `T` on `name` (its goal requests).
    pub fn action_server<T>(
        &mut self,
        name: &str,
    ) -> Result<Pin<Box<dyn Stream<Item = r2r::ActionServerGoalRequest<T>> + Send>>, RosError>
    where
        T: r2r::WrappedActionTypeSupport + 'static,
    {
        let stream = self
            .node
            .create_action_server::<T>(name)
            .map_err(rcl_error(format!("action server {name:?}")))?;
        Ok(Box::pin(stream))
    }

    /// A server of service `S` on `name`.
    pub fn server<S>(&mut self, name: &str) -> Result<Requests<S>, RosError>
    where
        S: r2r::WrappedServiceTypeSupport + 'static,
        S::Request: Send,
    {
        let stream = self
            .node
            .create_service::<S>(name, r2r::QosProfile::services_default())
            .map_err(rcl_error(format!("service {name:?}")))?;
        Ok(Box::pin(stream))
    }
}
