"""ament_python package: ``ros2 run rne_dynamics <node>`` finds the console scripts in lib/rne_dynamics."""
from glob import glob

from setuptools import find_packages, setup

PACKAGE = "rne_dynamics"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*"]),
    # the fixed C of every robot's written code (_native.py completes it with the robot's program)
    package_data={PACKAGE: ["data/*.urdf", "data/*.yaml", "data/*.csv", "_written_module.c"]},
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", glob("launch/*.launch.py")),
        (f"share/{PACKAGE}/config", glob("config/*.yaml") + glob("config/*.rviz")),
        (f"share/{PACKAGE}/urdf", glob(f"{PACKAGE}/data/*.urdf") + glob(f"{PACKAGE}/data/*_loops.yaml")),
    ],
    install_requires=["setuptools", "numpy", "numba", "pyyaml", "scipy", "matplotlib", "rosbags",
                      "dask[distributed]"],
    zip_safe=True,
    maintainer="rne_dynamics maintainers",
    maintainer_email="maintainers@rne-dynamics.invalid",
    description="Recursive Newton-Euler rigid-body dynamics of URDF robots for ROS 2 and Python",
    license="BSD-3-Clause",
    extras_require={"xacro": ["xacro"]},  # read xacro robots (imported only when one is given)
    entry_points={
        "console_scripts": [
            "inverse_dynamics_node = rne_dynamics.nodes.inverse_dynamics_node:main",
            "forward_dynamics_node = rne_dynamics.nodes.forward_dynamics_node:main",
            "gough_stewart_demo = rne_dynamics.nodes.gough_stewart_demo:main",
            "rne-dynamics = rne_dynamics.tools.cli:main",
        ],
    },
)
