from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import get_model, ModelOutput, ModelUsage, Logprobs, Logprob
from inspect_ai.scorer import includes
from inspect_ai.solver import generate, use_tools
from inspect_ai.tool import tool, ToolError
import random

@tool
def add():
    async def execute(x: int, y: int):
        """Add two numbers.

        Args:
            x: first number
            y: second number
        """
        if x < 0 or y < 0:
            raise ToolError("negative numbers are not allowed")
        return str(x + y)
    return execute

random.seed(3)
samples = [Sample(id=f"q{i}", input=f"What is {i} + {i+1}?", target=str(2*i+1)) for i in range(1, 5)]
outputs = []
def u(o, n, lp=None):
    o.usage = ModelUsage(input_tokens=20, output_tokens=n, total_tokens=20 + n)
    if lp is not None:
        o.choices[0].logprobs = Logprobs(content=[Logprob(token=f"t{i}", logprob=x) for i, x in enumerate(lp)])
    return o
for _ in range(40):
    r = random.random()
    if r < 0.3:
        outputs.append(u(ModelOutput.for_tool_call("mockllm/model", "add", {"x": -1, "y": 2}), 7, [-0.5, -0.25]))
    outputs.append(u(ModelOutput.for_tool_call("mockllm/model", "add", {"x": 1, "y": 2}), 9, [-0.125, -0.125, -0.25]))
    outputs.append(u(ModelOutput.from_content("mockllm/model", random.choice(["The answer is 3", "The answer is 5", "The answer is 7", "The answer is 9", "3, 5, 7 or 9", "3, 5, 7 or 9", "I am not sure"])), 5))

task = Task(dataset=samples, solver=[use_tools(add()), generate()], scorer=includes(), message_limit=6, epochs=3, name="calc")
eval(task, model=get_model("mockllm/model", custom_outputs=outputs), log_dir="/tmp/insp/logs", log_format="eval")
